"""The one registry of window formats that `imagepipe monitor --format` names, and
`read_window`, which lists a window's files and hands them to the reader that fits.

A reader module registers itself with `@reader(name, sniff=...)`; adding a
format touches its own file and the import list in `_registered`. Readers import
TensorFlow or Beam only while they read, so listing or sniffing stays light.
"""
import dataclasses
import functools
import json
import os
import struct
import time
from typing import Callable, Dict, Iterable, Iterator, Optional, Sequence

from core import durations
from core.storage import files
from core.errors import UsageError
from monitor.records import Item

# Sniffing reads at most this many files of a window before giving up: a folder of
# logs or images shows what it holds in its first few files.
SNIFF_FILES = 50
# Sniffing reads at most this many lines of a JSON-lines file for a parseable one.
SNIFF_LINES = 20
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
GZIP_MAGIC = b"\x1f\x8b"


class Sample:
    """What sniffing sees of one file: its name, its first bytes and its first JSON
    object, each read only when a sniffer asks (an image folder is told by names)."""

    def __init__(self, path: str):
        self.path = path
        self.name = os.path.basename(path.rstrip("/"))

    @functools.cached_property
    def head(self) -> bytes:
        """The first 12 bytes: a TFRecord's length and its checksum, or gzip's magic."""
        try:
            return files.read_head(self.path, 12)
        except Exception:  # noqa: BLE001  (unreadable: no reader claims it)
            return b""

    @functools.cached_property
    def first_object(self) -> Optional[dict]:
        """The first JSON object among the first lines (the first element of a JSON
        array line), or None if the file does not start as JSON lines."""
        if self.head.lstrip()[:1] not in (b"{", b"["):
            return None
        try:
            with files.open_file(self.path, "rb") as f:
                for _, line in zip(range(SNIFF_LINES), f):
                    found = _json_object(line)
                    if found is not None:
                        return found
        except Exception:  # noqa: BLE001  (unreadable: no reader claims it)
            return None
        return None


def _json_object(line: bytes) -> Optional[dict]:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, dict) else None


def looks_like_tfrecord(head: bytes) -> bool:
    """Whether `head` opens a gzipped file or an uncompressed TFRecord (its length's
    masked CRC-32C checks out: tensorflow/core/lib/io/record_writer.cc)."""
    if head[:2] == GZIP_MAGIC:
        return True
    if len(head) < 12:
        return False
    import google_crc32c  # as components/image_example_gen/encoding/shard_writer.py
    crc = google_crc32c.value(head[:8])
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    return struct.unpack("<I", head[8:12])[0] == masked


def keys_of(sample: Sample) -> frozenset:
    """The keys of the sample's first JSON object (empty if it has none)."""
    return frozenset(sample.first_object or ())


ReadFn = Callable[[Iterable[str], Sequence[str]], Iterator[Item]]


@dataclasses.dataclass(frozen=True)
class Reader:
    """One format: how to recognize one of its files, and how to read a window's files.

    `read(paths, labels)`: every Record/BadRecord of the files, in order; `labels`
    are the served model's class names in id order, for formats that log names.
    """

    name: str
    sniff: Callable[[Sample], bool]
    read: ReadFn


_READERS: Dict[str, Reader] = {}


def reader(name: str, sniff: Callable[[Sample], bool]) -> Callable[[ReadFn], ReadFn]:
    """Registers the decorated `read(paths, labels)` as the reader of format `name`."""
    def register(read: ReadFn) -> ReadFn:
        if name in _READERS:
            raise ValueError(f"two readers named {name!r}")
        _READERS[name] = Reader(name, sniff, read)
        return read
    return register


def _registered() -> Dict[str, Reader]:
    """Every reader, in sniffing order: this list's (the modules register themselves
    on import, in whatever order something first imports them)."""
    from monitor.readers import (
        image_folder, prediction_log, kserve, vertex, rest, imagepipe)
    order = [m.__name__ for m in (image_folder, prediction_log, kserve, vertex, rest,
                                  imagepipe)]
    return dict(sorted(_READERS.items(), key=lambda item: order.index(item[1].read.__module__)))


def format_names() -> Sequence[str]:
    """The names --format accepts."""
    return tuple(_registered())


def parse_duration(text: str, flag: str = "--since") -> float:
    """Seconds in '90s', '90m', '24h', '7d' or '2w' (core/durations.py);
    UsageError naming `flag` otherwise."""
    try:
        return durations.parse_duration(text)
    except ValueError:
        raise UsageError(f"{flag} {text}: not a duration; give one such as "
                         f"{durations.DURATION_EXAMPLES}") from None


def window_files(data: str, since_s: Optional[float] = None) -> Iterator[str]:
    """The files of a window, in order: `data` itself, the files a glob matches, or the
    visible files under a folder (recursively); with `since_s`, only those modified
    within that many seconds. UsageError naming --data if `data` does not exist."""
    if not files.has_wildcards(data) and not files.exists(data):
        raise UsageError(f"--data {data}: no such file or directory")
    cutoff = None if since_s is None else time.time_ns() - int(since_s * 1e9)
    return _listed(data, cutoff)


def _listed(data: str, cutoff: Optional[int]) -> Iterator[str]:
    if files.has_wildcards(data):
        found = iter(files.glob(data))
    elif not files.isdir(data):
        found = iter([data])
    elif cutoff is not None:  # one listing with times (remote: no stat per object)
        yield from (f.path for f in files.walk_files(data)
                    if f.mtime_ns >= cutoff and _visible(data, f.path))
        return
    else:
        from prediction.batch_io import _walk  # sorted, hidden folders pruned, lazy
        found = _walk(data, lambda name: not name.startswith("."))
    for path in found:
        if cutoff is None or files.stat(path).mtime_ns >= cutoff:
            yield path


def _visible(root: str, path: str) -> bool:
    relative = path[len(root.rstrip("/")) + 1:]
    return not any(part.startswith(".") for part in relative.split("/"))


def _reader(data: str, fmt: Optional[str], since_s: Optional[float]) -> Optional[Reader]:
    """The reader --format names, else the first whose sniff claims one of the window's
    first files; None for an empty window. UsageError naming the flag otherwise."""
    readers = _registered()
    if fmt is not None:
        if fmt not in readers:
            raise UsageError(f"--format {fmt}: unknown; one of {', '.join(readers)}")
        window_files(data, since_s)  # exists?
        return readers[fmt]
    seen = 0
    for seen, path in enumerate(window_files(data, since_s), 1):
        sample = Sample(path)
        for candidate in readers.values():
            if candidate.sniff(sample):
                return candidate
        if seen >= SNIFF_FILES:
            break
    if seen == 0:
        return None
    raise UsageError(f"--data {data}: its first {seen} file(s) are no images, TFRecords of "
                     "PredictionLog, or JSON lines of a known log; name the format with "
                     f"--format ({', '.join(readers)})")


def detect_format(data: str, fmt: Optional[str] = None,
                  since_s: Optional[float] = None) -> Optional[str]:
    """The format `read_window` reads `data` as (None for an empty window)."""
    found = _reader(data, fmt, since_s)
    return None if found is None else found.name


def read_window(data: str, fmt: Optional[str] = None, since_s: Optional[float] = None,
                labels: Sequence[str] = ()) -> Iterator[Item]:
    """Every Record/BadRecord of the window `data` (a file, folder, glob; local or gs://).

    Checked at the call (UsageError naming --data or --format), read as iterated:
    one record at a time, so a window of any size streams. In a folder, a reader
    takes the files it recognizes (an image folder's notes.txt is left alone); a
    file or glob given directly is read whatever its name, so a broken one shows
    as BadRecords. An empty window yields nothing.

    Args:
      data: the window (--data).
      fmt: a registered format (--format); None sniffs the window's first files.
      since_s: only files modified within this many seconds (--since).
      labels: the served model's class names in id order, for logs that name classes.
    """
    found = _reader(data, fmt, since_s)
    if found is None:
        return iter(())
    paths = window_files(data, since_s)
    if files.isdir(data) and not files.has_wildcards(data):
        paths = (p for p in paths if found.sniff(Sample(p)))
    return found.read(paths, labels)
