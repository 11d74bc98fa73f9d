"""Detect a dataset's format and list it, before anything is read in Beam."""
import os
from typing import Optional

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
from core.storage import files


def detect_format(root: str) -> str:
    """'folder', 'idx', 'npz' or 'tfrecord', from file names alone."""
    if not files.exists(root):
        raise DatasetError(f"--data {root}: no such file or directory")
    if not files.isdir(root):
        names = [root]
    else:
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
               "tfrecord": lambda path: list_tfrecord(path, options)}
    listing = listers[fmt](root)
    listing.format = fmt
    if options.groups:
        listing.groups = load_groups(options.groups, listing if check_groups else None, root)
    return listing


def load_groups(uri: str, listing: Optional[Listing], root: str) -> dict:
    """--groups of a listing, as DatasetError (exit 2) when bad.

    Paths are checked against an image-file listing, and against IDX and npz
    arrays' `name#index` ranges; TFRecords' counts are known only once read, so
    their rows are not checked.
    """
    known = None
    if listing is not None and listing.format == "folder":
        known = {unit.relpath for unit in listing.files}
    elif listing is not None and listing.format in ("idx", "npz"):
        known = ArrayPaths(listing.files, root)
    try:
        return read_groups(uri, known)
    except ValueError as e:
        raise DatasetError(str(e)) from None
