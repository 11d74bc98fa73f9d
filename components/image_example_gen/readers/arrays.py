"""Array datasets: MNIST-style IDX files and keras.datasets-style .npz files.

Listing validates everything that can be checked from headers and labels
(magic numbers, dtypes, shapes, counts) before Beam starts, so a bad file is
a clear error naming it, not a worker crash. Workers then read fixed chunks.
"""
import dataclasses
import gzip
import io
import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from core.contract import EVAL, TRAIN
from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from core.storage import files

CHUNK = 10_000
# IDX type codes (third magic byte) and their big-endian dtypes.
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_IDX_SPLITS = ((TRAIN, "train"), (EVAL, "t10k"))
NPZ_KEYS = ((TRAIN, "x_train", "y_train"), (EVAL, "x_test", "y_test"))


@dataclasses.dataclass(frozen=True)
class ArrayChunk:
    """Images [start, stop) of one array file; `path` is relative to the dataset root."""

    kind: str  # "idx" or "npz"
    path: str
    images: str  # IDX: images file; npz: array key
    labels: str
    start: int
    stop: int
    split: Optional[str]
    image_shape: Tuple[int, ...]


def _read_bytes(path: str) -> bytes:
    """The file's bytes, gunzipped if gzipped; local or remote (core/storage)."""
    data = files.read_bytes(path)
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def parse_idx(data: bytes, name: str) -> np.ndarray:
    """An IDX file's array, validated: magic, dimensions and data length."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        magic = data[:4].hex() or "empty"
        raise DatasetError(f"{name}: not an IDX file (bad magic number {magic})")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetError(f"{name}: truncated IDX header")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(data) - header != expected:
        raise DatasetError(f"{name}: IDX header says {shape} ({expected} bytes of data), "
                           f"file has {len(data) - header}")
    return np.frombuffer(data, dtype, offset=header).reshape(shape)


def _idx_file(root: str, prefix: str, kind: str) -> Optional[str]:
    for name in (f"{prefix}-{kind}", f"{prefix}-{kind}.gz"):
        if files.isfile(os.path.join(root, name)):
            return name
    return None


def _check_images(images, labels, name: str, labels_name: str) -> None:
    if images.dtype != np.uint8 or images.ndim not in (3, 4) or (
            images.ndim == 4 and images.shape[-1] not in (1, 3, 4)):
        raise DatasetError(f"{name}: expected uint8 images shaped NxHxW or NxHxWxC (C 1, 3 "
                           f"or 4), got {images.dtype} {images.shape}")
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise DatasetError(f"{labels_name}: expected a 1-D integer label array, "
                           f"got {labels.dtype} {labels.shape}")
    if len(images) != len(labels):
        raise DatasetError(f"{name} has {len(images)} images but {labels_name} has "
                           f"{len(labels)} labels")
    if len(labels) and labels.min() < 0:
        raise DatasetError(f"{labels_name}: labels must be >= 0, found {labels.min()}")


def _chunks(kind, path, images, labels, count, split, shape) -> List[ArrayChunk]:
    return [ArrayChunk(kind, path, images, labels, start, min(start + CHUNK, count), split, shape)
            for start in range(0, count, CHUNK)]


def _listing(units: List[ArrayChunk], max_label: int, fmt: str) -> Listing:
    return Listing(classes=[str(i) for i in range(max_label + 1)], files=units, format=fmt)


def list_idx(root: str) -> Listing:
    """train-images/labels (and t10k- for eval) IDX files in `root`, optionally gzipped."""
    units, max_label = [], -1
    for split, prefix in _IDX_SPLITS:
        images_name = _idx_file(root, prefix, "images-idx3-ubyte")
        labels_name = _idx_file(root, prefix, "labels-idx1-ubyte")
        if images_name is None and labels_name is None:
            continue
        if images_name is None or labels_name is None:
            raise DatasetError(f"--data {root}: {images_name or labels_name} needs its "
                               f"{'labels' if labels_name is None else 'images'} file")
        labels = parse_idx(_read_bytes(os.path.join(root, labels_name)), labels_name)
        images = parse_idx(_read_bytes(os.path.join(root, images_name)), images_name)
        _check_images(images, labels, images_name, labels_name)
        max_label = max(max_label, int(labels.max()) if len(labels) else -1)
        units += _chunks("idx", images_name, images_name, labels_name, len(labels), split,
                         images.shape[1:])
    if not units or units[0].split != TRAIN:
        raise DatasetError(f"--data {root}: expected train-images-idx3-ubyte[.gz] and "
                           "train-labels-idx1-ubyte[.gz] (t10k-* for eval)")
    if len({u.split for u in units}) == 1:  # no t10k files: hash-split train
        units = [dataclasses.replace(u, split=None) for u in units]
    return _listing(units, max_label, "idx")


def _npz_path(root: str) -> str:
    if not files.isdir(root):
        return root
    found = [n for n in files.list_dir(root)[1] if n.lower().endswith(".npz")]
    if len(found) != 1:
        raise DatasetError(f"--data {root}: expected exactly one .npz file, found {found}")
    return os.path.join(root, found[0])


def list_npz(root: str) -> Listing:
    """x_train/y_train (and x_test/y_test for eval) in an .npz; no pickles are loaded."""
    path = _npz_path(root)
    name = os.path.basename(path)
    try:
        arrays = np.load(io.BytesIO(files.read_bytes(path)), allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DatasetError(f"{path}: not a readable .npz ({e})") from None
    with arrays:
        if "x_train" not in arrays.files or "y_train" not in arrays.files:
            raise DatasetError(f"{path}: expected arrays x_train, y_train (and x_test, "
                               f"y_test); found {sorted(arrays.files)}")
        units, max_label = [], -1
        for split, x_key, y_key in NPZ_KEYS:
            if x_key not in arrays.files:
                continue
            if y_key not in arrays.files:
                raise DatasetError(f"{path}: {x_key} needs {y_key}; found {sorted(arrays.files)}")
            try:
                images, labels = arrays[x_key], arrays[y_key].reshape(-1)
            except ValueError as e:  # e.g. object arrays, which would need pickle
                raise DatasetError(f"{path}: cannot load {x_key}/{y_key} ({e})") from None
            _check_images(images, labels, f"{name}:{x_key}", f"{name}:{y_key}")
            max_label = max(max_label, int(labels.max()) if len(labels) else -1)
            units += _chunks("npz", os.path.relpath(path, root) if path != root else "",
                             x_key, y_key, len(labels), split, images.shape[1:])
    if len({u.split for u in units}) == 1:
        units = [dataclasses.replace(u, split=None) for u in units]
    return _listing(units, max_label, "npz")


def chunk_name(chunk: ArrayChunk, root: str) -> str:
    """The display name of a chunk's array: its examples are `name#index`."""
    if chunk.kind == "idx":
        return chunk.images
    path = os.path.join(root, chunk.path) if chunk.path else root
    return f"{os.path.basename(path)}:{chunk.images}"


class ArrayPaths:
    """`name#index` of every image in array chunks, for `in`, without listing them all."""

    def __init__(self, chunks: List[ArrayChunk], root: str):
        self._ranges: Dict[str, List[Tuple[int, int]]] = {}
        for chunk in chunks:
            self._ranges.setdefault(chunk_name(chunk, root), []).append((chunk.start, chunk.stop))

    def __contains__(self, path: str) -> bool:
        name, _, index = path.rpartition("#")
        # As examples are named: ASCII digits, no leading zero ("#03" names no example).
        if not (index.isascii() and index.isdigit() and str(int(index)) == index):
            return False
        return any(start <= int(index) < stop for start, stop in self._ranges.get(name, ()))


def read_chunk(chunk: ArrayChunk, root: str) -> Tuple[np.ndarray, np.ndarray, str]:
    """(images, labels, display name) of one chunk, read on a worker."""
    path = os.path.join(root, chunk.path) if chunk.path else root
    if chunk.kind == "idx":
        images = parse_idx(_read_bytes(path), chunk.images)
        labels = parse_idx(_read_bytes(os.path.join(root, chunk.labels)), chunk.labels)
    else:
        with np.load(io.BytesIO(_read_bytes(path)), allow_pickle=False) as arrays:
            images, labels = arrays[chunk.images], arrays[chunk.labels].reshape(-1)
    return (images[chunk.start:chunk.stop], labels[chunk.start:chunk.stop],
            chunk_name(chunk, root))


def encode_png(pixels: np.ndarray) -> bytes:
    """Lossless PNG bytes of an HxW or HxWxC uint8 array."""
    from PIL import Image  # workers only
    if pixels.ndim == 3 and pixels.shape[-1] == 1:
        pixels = pixels[..., 0]
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()
