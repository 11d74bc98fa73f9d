"""What `imagepipe predict --data` reads and writes: the job, image sources, checks, rows.

Plain functions over paths and bytes, so they are tested without Beam. Paths
go through core/storage, so a gs:// folder or glob works on Dataflow too.
"""
import csv
import dataclasses
import io
import json
import os
from typing import Iterator, List, Optional, Tuple

import numpy as np

from core.contract import ASSETS_EXTRA, FILENAME_KEY
from core.storage import files
from components.image_example_gen.encoding.encode import BadImageError, decode_fully

from components.image_example_gen.readers.folder_tree import IMAGE_EXTENSIONS, is_image_name
from settings.config import DEFAULT_MAX_PIXELS
from core.errors import UsageError

# `imagepipe predict --data`: images per call of the serving_image signature.
# Each is decoded at full size inside the call before the resize, so the
# batch bounds memory for large photos; Beam adapts up to it from 1.
BATCH_PREDICT_MAX_BATCH = 64
BATCH_PREDICT_PROGRESS_SECONDS = 10.0  # a progress line at most this often

OUTPUT_KINDS = {".jsonl": "jsonl", ".csv": "csv"}
CSV_COLUMNS = ("path", "class", "probability", "top_k", "error")
# One unit of work: (path or record id, the encoded image), or an error row.
Item = Tuple[str, bytes]


def output_kind(path: str) -> str:
    """'jsonl' or 'csv' from the --output extension; UsageError naming the flag otherwise."""
    kind = OUTPUT_KINDS.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise UsageError(f"--output {path}: must end in .jsonl (one JSON object per line) "
                         "or .csv")
    return kind


@dataclasses.dataclass(frozen=True)
class BatchJob:
    """What one batch prediction reads, runs and writes, checked before Beam starts."""

    source: str  # "folder" or "tfrecord"
    units: List[str]  # [the folder], or the TFRecord files
    model_path: str  # a SavedModel version folder
    labels: List[str]
    output: str  # --output
    kind: str  # "jsonl" or "csv"
    top_k: int
    image_key: str
    progress_s: float = BATCH_PREDICT_PROGRESS_SECONDS


def saved_model_path(model: str) -> str:
    """The SavedModel folder --model names; UsageError naming the flag otherwise."""
    from prediction.predict import resolve_model
    kind, path = resolve_model(model)  # local or gs://, through core/storage
    if kind != "saved_model":
        raise UsageError(f"--model {model}: batch prediction (--data) needs a SavedModel "
                         "folder or a serving base folder, not a .tflite file")
    return path


def plan_job(model: str, data: str, output: str, top_k: int, image_key: str) -> BatchJob:
    """The job for these flags; UsageError naming the flag if one is wrong."""
    from core.contract import LABELS_FILE, read_labels
    kind = output_kind(output)
    model_path = saved_model_path(model)
    source = source_kind(data)
    units = [data] if source == "folder" else record_files(data)
    labels = read_labels(os.path.join(model_path, ASSETS_EXTRA, LABELS_FILE))
    return BatchJob(source, units, model_path, labels, output, kind, top_k, image_key)


def source_kind(data: str) -> str:
    """'folder' (image files, walked recursively) or 'tfrecord'; UsageError naming --data.

    A folder with any image file is read as images (found at once, where
    looking for record files first would walk all of a large image tree).
    """
    if files.has_wildcards(data):
        return "tfrecord"
    if not files.exists(data):
        raise UsageError(f"--data {data}: no such file or directory")
    if not files.isdir(data):
        if is_image_name(os.path.basename(data)):
            raise UsageError(f"--data {data}: an image file; give image files as IMAGE..., "
                             "or a folder as --data")
        return "tfrecord"
    if next(iter_image_paths(data), None) is not None:
        return "folder"
    if next(iter_record_files(data), None) is None:
        raise UsageError(f"--data {data}: holds no image files ({', '.join(IMAGE_EXTENSIONS)}) "
                         "and no *.tfrecord* files")
    return "tfrecord"


def _walk(root: str, wanted) -> Iterator[str]:
    """Paths under `root` whose name is `wanted`, in sorted order, hidden folders skipped;
    a generator, so a million files are never listed at once."""
    for folder, subdirs, names in files.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))  # walk follows it
        for name in sorted(names):
            if wanted(name):
                yield os.path.join(folder, name)


def iter_image_paths(root: str) -> Iterator[str]:
    """Image files under `root`, with the extensions ingestion accepts."""
    return _walk(root, is_image_name)


def iter_record_files(root: str) -> Iterator[str]:
    """Files named *.tfrecord* under `root` (an `imagepipe ingest` or TFX Examples folder)."""
    return _walk(root, lambda name: ".tfrecord" in name.lower() and not name.startswith("."))


def record_files(data: str) -> List[str]:
    """The TFRecord files of --data: a file, a glob, or the record files in a folder."""
    if files.has_wildcards(data):
        found = files.glob(data)
    elif files.isdir(data):
        found = list(iter_record_files(data))
    else:
        found = [data]
    if not found:
        raise UsageError(f"--data {data}: matches no TFRecord files")
    return found


def read_image(path: str) -> Item:
    """(path, bytes) of one image file; raises OSError if it cannot be read.

    Through core/storage: a gs:// object in one pooled request, where
    TensorFlow's file client took several, each on a new connection.
    """
    import tensorflow as tf
    try:
        return path, files.read_bytes(path)
    except tf.errors.OpError as e:
        raise OSError(e.message) from None
    except Exception as e:  # noqa: BLE001  (google-cloud-storage's errors: NotFound, ...)
        if isinstance(e, OSError):
            raise
        raise OSError(f"{type(e).__name__}: {e}") from None


def _record_item(record: bytes, item_id: str, image_key: str) -> object:
    """(id, image bytes) of one serialized tf.Example, or its error row."""
    import tensorflow as tf
    from google.protobuf.message import DecodeError
    try:
        feature = tf.train.Example.FromString(record).features.feature
    except DecodeError:
        return error_row(item_id, "record is not a tf.Example")
    name = feature[FILENAME_KEY].bytes_list.value if FILENAME_KEY in feature else []
    item_id = name[0].decode("utf-8", "replace") if name else item_id
    images = feature[image_key].bytes_list.value if image_key in feature else []
    return (item_id, images[0]) if images else error_row(
        item_id, f"no bytes feature {image_key!r} (--image-key)")


def iter_records(path: str, image_key: str) -> Iterator[object]:
    """(id, bytes) per tf.Example of one TFRecord file, gzipped or not, or an error row.

    The id is the example's image/filename, as ingestion writes it, else
    `path:index`. A file cut short ends with one error row instead of failing
    the whole run.
    """
    import tensorflow as tf

    from components.image_example_gen.readers.tfrecords import iter_records as raw_records
    count = 0
    try:
        for record in raw_records(path):
            yield _record_item(record, f"{path}:{count}", image_key)
            count += 1
    except tf.errors.OpError as e:  # DataLossError: truncated or corrupt
        yield error_row(f"{path}:{count}", f"unreadable TFRecord: {e.message}")


def error_row(path: str, error: str) -> dict:
    """The output row of an image that could not be classified; the reason on one line."""
    return {"path": path, "error": " ".join(error.split())}


def checked(item: Item) -> Optional[str]:
    """None if the bytes decode as ingestion decodes them, else why not (one line)."""
    try:
        decode_fully(item[1], DEFAULT_MAX_PIXELS)  # the ingestion's check, and its pixel limit
    except BadImageError as e:
        return str(e)
    return None


def prediction_row(path: str, probabilities: np.ndarray, labels: List[str], k: int) -> dict:
    """The output row of a classified image: top-1 class and the top k."""
    from prediction.predict import top_k
    best = top_k(probabilities, labels, k)
    return {"path": path, "class": best[0][0], "probability": best[0][1],
            "top_k": [{"class": name, "probability": p} for name, p in best]}


def csv_header() -> str:
    """The CSV output's first line."""
    return ",".join(CSV_COLUMNS)


def format_row(row: dict, kind: str) -> str:
    """One output line, without its newline: a JSON object, or a CSV record."""
    if kind == "jsonl":
        return json.dumps(row, ensure_ascii=False)
    values = {**row, "top_k": json.dumps(row["top_k"]) if "top_k" in row else ""}
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([values.get(c, "") for c in CSV_COLUMNS])
    return buffer.getvalue()
