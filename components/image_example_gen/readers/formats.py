"""Detect a dataset's format and list it, before anything is read in Beam."""
import csv
import dataclasses
import io
import os
from typing import Callable, List, Optional

from core.contract import TRAIN
from components.image_example_gen.data_health.groups_csv import read_groups
from components.image_example_gen.readers.arrays import ArrayPaths, list_idx, list_npz
from components.image_example_gen.readers.folder_tree import (
    DatasetError,
    Listing,
    list_class_folders,
    split_dirs,
)
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.tfrecords import list_tfrecord
from components.image_example_gen.readers.hub_datasets.hf_datasets import (
    list_hf_disk, list_hf_parquet, looks_like_hf_disk, looks_like_hf_parquet)
from components.image_example_gen.readers.hub_datasets.tfds_folders import (list_tfds,
                                                                           looks_like_tfds)
from components.image_example_gen.readers.manifests.csv_manifest import (header_names_a_path,
                                                                        list_csv_manifest)
from components.image_example_gen.readers.manifests.import_files import (list_vertex_csv,
                                                                        list_vertex_jsonl)
from components.image_example_gen.readers.manifests.manifest_paths import (image_infos,
                                                                          image_path)
from components.image_example_gen.readers.manifests.manifest_rows import (is_split_value,
                                                                         looks_like_image)
from core.storage import files

# Formats whose units are image files (ImageFile), each with its relpath.
IMAGE_FILE_FORMATS = ("folder", "vertex-csv", "vertex-jsonl", "csv")
MANIFEST_FORMATS = ("vertex-csv", "vertex-jsonl", "csv")
HEAD_BYTES = 64 << 10  # of a .csv, read to tell its kind from its first row


def detect_format(root: str) -> str:
    """The format of `--data`: the first answer of FILE_CHECKS (a file) or FOLDER_CHECKS
    (a folder), else 'idx', 'npz', 'tfrecord' or 'folder' from file names alone.

    A new format adds its check to one of the two lists.

    Raises:
      DatasetError: `root` is missing, or a check cannot tell (a .csv that is
        neither kind of manifest).
    """
    if not files.exists(root):
        raise DatasetError(f"--data {root}: no such file or directory")
    folder = files.isdir(root)
    for check in FOLDER_CHECKS if folder else FILE_CHECKS:
        found = check(root)
        if found:
            return found
    names = [root]
    if folder:
        names = files.listdir(root)
        splits = split_dirs(root)
        if splits:
            names += files.listdir(os.path.join(root, splits[TRAIN]))
    lowered = [os.path.basename(n).lower() for n in names]
    if any("-idx3-ubyte" in n for n in lowered):
        return "idx"
    if any(n.endswith(".npz") for n in lowered):
        return "npz"
    if any(".tfrecord" in n for n in lowered):
        return "tfrecord"
    return "folder"


def manifest_format(path: str) -> Optional[str]:
    """'vertex-jsonl' for a .jsonl file; for a .csv, 'csv' if its first row is a header
    (it names no image, its first cell is no ML_USE value, and a column is named as
    paths are), else 'vertex-csv' if that row names an image; None for other files.

    Raises:
      DatasetError: a .csv that is neither (names --format).
    """
    name = path.lower()
    if name.endswith(".jsonl"):
        return "vertex-jsonl"
    if not name.endswith(".csv"):
        return None
    text = files.read_head(path, HEAD_BYTES).decode("utf-8", "replace").lstrip("\ufeff")
    first = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    names_image = any(looks_like_image(cell) for cell in first)
    if not names_image and first and not is_split_value(first[0]) \
            and header_names_a_path(first):
        return "csv"
    if names_image:
        return "vertex-csv"
    raise DatasetError(
        f"--data {path}: cannot tell its kind from the first row ({','.join(first)[:80]}): it "
        "names no image, and no column is named as image paths are; give --format csv "
        "(a header; --path-column, --label-column) or --format vertex-csv")


# Format checks of --data, in order, before the file-name rules: each takes the path and
# answers a format or None.
def _named(fmt: str, looks_like: Callable[[str], bool]) -> Callable[[str], Optional[str]]:
    """A check of FILE_CHECKS or FOLDER_CHECKS from a `looks_like_<x>(path) -> bool`."""
    return lambda path: fmt if looks_like(path) else None


FILE_CHECKS = (manifest_format, _named("hf-parquet", looks_like_hf_parquet))
# Before the file-name rules: TFDS shards (name-train.tfrecord-00000-of-00004) are not
# plain TFRecords of tf.Example as imagepipe reads them.
FOLDER_CHECKS = (_named("tfds", looks_like_tfds), _named("hf-disk", looks_like_hf_disk),
                 _named("hf-parquet", looks_like_hf_parquet))


def list_dataset(root: str, options: IngestOptions, check_groups: bool = True) -> Listing:
    """Lists the units to ingest, in the given or detected format, and reads --groups.

    `check_groups`: a groups row naming an image file the listing lacks is an
    error (spans turn it off: each span holds some of the paths).

    Raises:
      DatasetError: the data cannot be ingested, or the groups file is bad;
        the message says why.
    """
    fmt = detect_format(root) if options.format == "auto" else options.format
    listers = {"folder": list_class_folders, "idx": list_idx, "npz": list_npz,
               "tfrecord": lambda path: list_tfrecord(path, options),
               "vertex-csv": lambda path: list_vertex_csv(path, options),
               "vertex-jsonl": lambda path: list_vertex_jsonl(path, options),
               "csv": lambda path: list_csv_manifest(path, options),
               "hf-parquet": lambda path: list_hf_parquet(path, options),
               "hf-disk": lambda path: list_hf_disk(path, options),
               "tfds": lambda path: list_tfds(path, options)}
    listing = listers[fmt](root)
    listing.format = fmt
    if options.groups:
        listing.groups = load_groups(options.groups, listing if check_groups else None, root)
    return listing


def manifest_files(root: str, options: IngestOptions) -> Optional[List[files.FileInfo]]:
    """For a manifest: the manifest and each image it lists, with size and mtime, named as
    in the examples (the cache fingerprint, driver.py); None for other data."""
    fmt = detect_format(root) if options.format == "auto" else options.format
    if fmt not in MANIFEST_FORMATS:
        return None
    listing = list_dataset(root, options, check_groups=False)
    names = {image_path(root, unit.relpath): unit.relpath for unit in listing.files}
    infos = image_infos(names)
    own = dataclasses.replace(files.stat(root), path=os.path.basename(root))
    return [own, *(dataclasses.replace(i, path=names[i.path]) for i in infos)]


def load_groups(uri: str, listing: Optional[Listing], root: str) -> dict:
    """--groups of a listing, as DatasetError (exit 2) when bad.

    Paths are checked against an image-file listing, and against IDX and npz
    arrays' `name#index` ranges; TFRecords' counts are known only once read, so
    their rows are not checked.
    """
    known = None
    if listing is not None and listing.format in IMAGE_FILE_FORMATS:
        known = {unit.relpath for unit in listing.files}
    elif listing is not None and listing.format in ("idx", "npz"):
        known = ArrayPaths(listing.files, root)
    try:
        return read_groups(uri, known)
    except ValueError as e:
        raise DatasetError(str(e)) from None
