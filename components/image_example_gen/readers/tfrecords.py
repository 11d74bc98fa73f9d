"""Existing TFRecords of tf.Example, with user-named image and label keys."""
import dataclasses
import os
import re
from typing import Iterator, List, Optional

import tensorflow as tf

from components.image_example_gen.readers.folder_tree import DatasetError, Listing, split_dirs
from components.image_example_gen.options import IngestOptions
from core.storage import files


@dataclasses.dataclass(frozen=True)
class RecordFile:
    """One TFRecord file; `path` is relative to the dataset root ('' if root is the file)."""

    path: str
    split: Optional[str] = None


def _compression(path: str) -> str:
    try:
        with files.open_file(path, "rb") as f:
            head = f.read(2)
    except OSError:  # unreadable local file: tf.data's error, which callers catch, says why
        return ""
    return "GZIP" if head == b"\x1f\x8b" else ""


def iter_records(path: str) -> Iterator[bytes]:
    """Serialized records of one file, gzipped or not; raises tf.errors.DataLossError if cut."""
    for record in tf.data.TFRecordDataset(path, compression_type=_compression(path)):
        yield record.numpy()


def _feature_kinds(example: tf.train.Example) -> dict:
    return {k: v.WhichOneof("kind") for k, v in example.features.feature.items()}


def check_keys(example: tf.train.Example, options: IngestOptions, name: str) -> None:
    """Raises DatasetError listing the keys that exist if the image or label key is missing."""
    kinds = _feature_kinds(example)
    wanted = ((options.image_key, "bytes_list", "--image-key"),
              (options.label_key, "int64_list", "--label-key"))
    for key, kind, flag in wanted:
        if kinds.get(key) != kind:
            found = ", ".join(f"{k} ({v.split('_')[0]})" for k, v in sorted(kinds.items()))
            raise DatasetError(f"{name}: {flag} {key!r} is not a {kind.split('_')[0]} feature "
                               f"here; the records have: {found}")


def _record_files(folder: str) -> List[str]:
    """Files named *.tfrecord* in `folder`, else every visible file there."""
    visible = [n for n in files.list_dir(folder)[1] if not n.startswith(".")]
    named = [n for n in visible if ".tfrecord" in n.lower()]
    return named or visible


def _units(root: str) -> List[RecordFile]:
    if not files.isdir(root):
        return [RecordFile("")]
    splits = split_dirs(root)
    if splits:  # e.g. an `imagepipe ingest` output: train/ and eval/ keep their splits
        return [RecordFile(f"{folder}/{name}", split) for split, folder in splits.items()
                for name in _record_files(os.path.join(root, folder))]
    return [RecordFile(name) for name in _record_files(root)]


def list_tfrecord(root: str, options: IngestOptions) -> Listing:
    """TFRecord files of tf.Examples: `root` itself, the record files in it, or in its
    train/ and eval/ (or val/, validation/, test/) folders, which then fix the splits."""
    units = _units(root)
    if not units:
        raise DatasetError(f"--data {root}: no TFRecord files")
    first = os.path.join(root, units[0].path) if units[0].path else root
    try:
        record = next(iter_records(first), None)
    except tf.errors.OpError as e:
        raise DatasetError(f"{first}: not a readable TFRecord file ({e.message})") from None
    if record is None:
        raise DatasetError(f"{first}: holds no records")
    check_keys(tf.train.Example.FromString(record), options, first)
    return Listing(classes=None, files=units, format="tfrecord")


def sample_images(root: str, listing: Listing, options: IngestOptions, count: int) -> List[bytes]:
    """The first `count` encoded images, for probing the default size."""
    first = listing.files[0].path
    found = []
    for record in iter_records(os.path.join(root, first) if first else root):
        feature = tf.train.Example.FromString(record).features.feature[options.image_key]
        found.append(feature.bytes_list.value[0])
        if len(found) == count:
            break
    return found


def record_error(error: "tf.errors.OpError") -> str:
    """The OS-level part of a tf.data error: 'truncated record at 1710', without the
    '{{function_node __wrapped__IteratorGetNext...}}' wrapper TF puts around it."""
    found = re.search(r"(truncated record at \d+|corrupted record at \d+|"
                      r"Data loss: [^\[{]+)", error.message)
    return found.group(1).strip() if found else error.message
