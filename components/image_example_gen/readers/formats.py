"""Detect a dataset's format and list it, before anything is read in Beam."""
import os

from components.contract import TRAIN
from components.image_example_gen.readers.arrays import list_idx, list_npz
from components.image_example_gen.readers.folder_tree import (
    DatasetError,
    Listing,
    list_class_folders,
    split_dirs,
)
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.tfrecords import list_tfrecord
from components.storage import files


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


def list_dataset(root: str, options: IngestOptions) -> Listing:
    """Lists the units to ingest, in the given or detected format.

    Raises:
      DatasetError: the data cannot be ingested; the message says why.
    """
    fmt = detect_format(root) if options.format == "auto" else options.format
    listers = {"folder": list_class_folders, "idx": list_idx, "npz": list_npz,
               "tfrecord": lambda path: list_tfrecord(path, options)}
    listing = listers[fmt](root)
    listing.format = fmt
    return listing
