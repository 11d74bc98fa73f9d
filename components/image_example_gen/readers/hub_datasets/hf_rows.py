"""Reading the rows of Hugging Face datasets (listed by hf_datasets.py): Parquet row
groups and Arrow record batches, to encoded examples.

Rows are streamed in batches of BATCH_ROWS: a worker holds one Parquet row group
(pyarrow 10 decodes a row group whole; `datasets` writes image datasets 100 rows a group)
or one Arrow record batch, however large the dataset. Every file is opened through
core/storage (local or gs://): a Parquet file's footer and row groups are then ranged
reads of that seekable file object, with the bucket's usual credentials, where pyarrow's
own GCS filesystem would need its own set up.
"""
import contextlib
import dataclasses
import os
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

from components.image_example_gen.encoding import encode
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import Listing
from components.image_example_gen.readers.hub_datasets.labelled_rows import encode_row
from components.image_example_gen.readers.manifests import manifest_paths
from core.storage import files

# Rows turned into Python objects at a time.
BATCH_ROWS = 64
# Parquet column chunks are read in pieces this large rather than in one read each
# (measured: the peak of Python allocations fell from two row groups' bytes to one).
READ_BUFFER = 1 << 20


@dataclasses.dataclass(frozen=True)
class HfRows:
    """Rows [start, stop) of one Parquet or Arrow file (`path` relative to the root, ''
    if the root is the file): Parquet row groups [first_group, stop_group), or a whole
    Arrow file, whose record batches can only be read in order."""

    path: str
    start: int
    stop: int
    split: Optional[str]
    image: str
    label: str
    string_labels: bool
    first_group: int = 0
    stop_group: int = 0


def file_path(root: str, relpath: str) -> str:
    """A unit's file: `relpath` under `root`, or `root` itself when it is the file."""
    return os.path.join(root, relpath) if relpath else root


@contextlib.contextmanager
def open_parquet(path: str) -> Iterator[pq.ParquetFile]:
    """A Parquet file, its footer read; row groups are read when asked for."""
    with files.open_readable(path) as f:
        yield pq.ParquetFile(f, buffer_size=READ_BUFFER)


def arrow_batches(path: str) -> Iterator[pa.RecordBatch]:
    """Record batches of an Arrow IPC stream (`datasets`' format) or IPC file, in order."""
    with files.open_readable(path) as f:
        magic = f.read(6)
        f.seek(0)
        if magic == b"ARROW1":
            reader = pa.ipc.open_file(f)
            yield from (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            yield from pa.ipc.open_stream(f)


def batches(root: str, unit: HfRows, columns: List[str]) -> Iterator[pa.RecordBatch]:
    """The unit's rows in batches of at most BATCH_ROWS (Parquet: only `columns`)."""
    path = file_path(root, unit.path)
    if not path.lower().endswith(".parquet"):
        yield from arrow_batches(path)
        return
    with open_parquet(path) as parquet:
        yield from parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns,
                                        row_groups=range(unit.first_group, unit.stop_group),
                                        use_threads=False)


def column(batch: pa.RecordBatch, name: str) -> pa.Array:
    """A batch's column by name."""
    return batch.column(batch.schema.get_field_index(name))


def _image_cells(images: pa.Array) -> List[Tuple[Optional[bytes], Optional[str]]]:
    """(bytes, path) of each row: datasets' Image struct, or plain binary (no path)."""
    if not pa.types.is_struct(images.type):
        return [(data, None) for data in images.to_pylist()]
    data = images.field("bytes").to_pylist()
    fields = {images.type[i].name for i in range(images.type.num_fields)}
    paths = images.field("path").to_pylist() if "path" in fields else [None] * len(data)
    return list(zip(data, paths))


def row_roots(root: str, options: IngestOptions) -> manifest_paths.RootCheck:
    """Where the image files that rows name may be: under the dataset's folder or bucket,
    and --allowed-root, as for a manifest's rows (readers/manifests/manifest_paths.py)."""
    return manifest_paths.RootCheck(manifest_paths.allowed_roots(root, options.allowed_root))


def _row_image(data: Optional[bytes], path: Optional[str], folder: str,
               roots: manifest_paths.RootCheck) -> Tuple[Optional[bytes], str]:
    """(the row's image bytes, '') or (None, why not). A row may name its image file
    instead of holding its bytes (datasets' to_parquet of image files keeps only their
    paths): an absolute path or URI, or one relative to the data file's folder, under
    the allowed `roots`, so that a dataset from elsewhere cannot make us read any file."""
    if data is not None or not path:
        return data, "" if data is not None else "no image bytes in the row"
    full = manifest_paths.location(folder, path)
    if not roots.allowed(full):
        return None, (f"no image bytes in the row, and its path {path} is outside the "
                      f"allowed roots ({', '.join(roots.roots)}); add its folder with "
                      "--allowed-root")
    try:
        return files.read_bytes(full), ""
    except Exception as e:  # noqa: BLE001  (any failure is this row's to report)
        return None, f"no image bytes in the row, and its path {full} cannot be read: {e}"


def _label_ids(values: list, unit: HfRows, index: Dict[str, int]) -> list:
    """Class ids of a batch's labels; a string label no class has stays as it is."""
    if not unit.string_labels:
        return values
    return [index.get(v, v) for v in values]


def read_hf_unit(unit: HfRows, root: str, classes: List[str], options: IngestOptions,
                 split_of: Callable[[str], str], groups: Dict[str, str]
                 ) -> Iterator[encode.Encoded]:
    """Encoded examples, and skipped records (`file#row`: undecodable image, label that
    is no declared class), of one unit, BATCH_ROWS rows in memory at a time."""
    name = unit.path or os.path.basename(root)
    folder = os.path.dirname(file_path(root, unit.path))
    index = {label: i for i, label in enumerate(classes)}
    roots = row_roots(root, options)
    row = unit.start  # rows read so far; the next one is the first unreadable
    try:
        for batch in batches(root, unit, [unit.image, unit.label]):
            cells = _image_cells(column(batch, unit.image))
            labels = _label_ids(column(batch, unit.label).to_pylist(), unit, index)
            for (data, path), label in zip(cells, labels):
                relpath = f"{name}#{row}"
                data, missing = _row_image(data, path, folder, roots)
                yield encode_row(data, label, relpath, unit.split or split_of(relpath),
                                 classes, options, groups, missing)
                row += 1
    except (pa.ArrowException, OSError) as e:  # cut or corrupt: keep what was read
        yield {"path": f"{name}#{row}+", "reason": f"unreadable {_kind(name)}: {e}"}


def _kind(name: str) -> str:
    return "Parquet file" if name.lower().endswith(".parquet") else "Arrow file"


def sample_hf_images(root: str, listing: Listing, count: int,
                     options: IngestOptions) -> List[bytes]:
    """The first `count` encoded images of a listing, for the plan's probe of sizes."""
    found, roots = [], row_roots(root, options)
    for unit in listing.files:
        folder = os.path.dirname(file_path(root, unit.path))
        for batch in batches(root, unit, [unit.image]):
            images = (_row_image(data, path, folder, roots)[0]
                      for data, path in _image_cells(column(batch, unit.image)))
            found += [data for data in images if data][:count - len(found)]
            if len(found) >= count:
                return found
    return found
