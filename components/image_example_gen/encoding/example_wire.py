"""Serialize our tf.train.Example without TensorFlow or protobuf message objects.

Why: ingestion encodes images in worker processes, and importing TensorFlow
would cost each of them longer than encoding many thousands of small images
takes. Building the message through protobuf's Python API was a large share of
all the work (measured: docs/performance.md). The examples have a fixed shape
(bytes, int64 and float features), so this writes the wire format directly: the same
bytes as `tf.train.Example.SerializeToString(deterministic=True)`, keys in
sorted order, which tests/components/image_example_gen/encoding/test_example_wire.py
checks.
"""
import functools
import struct
from typing import Dict, Union

Value = Union[bytes, int, float]


_SMALL = [bytes((i,)) for i in range(0x80)]


def _varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _SMALL[value]
    value &= (1 << 64) - 1  # negative int64s take ten bytes, as in protobuf
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field; `tag` is its key byte (field number << 3 | 2)."""
    return tag + _varint(len(payload)) + payload


_F1, _F2, _F3 = b"\x0a", b"\x12", b"\x1a"  # fields 1, 2 and 3, length-delimited


@functools.lru_cache(maxsize=256)
def _key(key: str) -> bytes:
    return _field(_F1, key.encode("utf-8"))


def _feature(value: Value) -> bytes:
    """Feature{bytes_list: {value: [v]}} (field 1), {float_list: ...} (field 2, a float32)
    or {int64_list: ...} (field 3)."""
    if isinstance(value, bytes):
        return _field(_F1, _field(_F1, value))
    if isinstance(value, float):
        return _field(_F2, _field(_F1, struct.pack("<f", value)))  # packed repeated float
    return _field(_F3, _field(_F1, _varint(value)))  # packed repeated int64


def serialize_example(features: Dict[str, Value]) -> bytes:
    """Example{features: Features{feature: {key: one bytes, int64 or float value}}},
    deterministic."""
    entries = b"".join(_field(_F1, _key(key) + _field(_F2, _feature(features[key])))
                       for key in sorted(features))
    return _field(_F1, entries)
