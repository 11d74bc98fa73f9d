"""Hugging Face datasets, found and listed: Parquet shards in the Hub's layout, and
`datasets` save_to_disk folders; their rows are read by hf_rows.py.

- Hub Parquet: data/train-00000-of-00003.parquet, <split>/*.parquet, *.parquet, or one
  file; the split is the folder, or the file name up to its first '-' or '.'.
- save_to_disk: one Dataset (Arrow IPC stream files data-00000-of-00001.arrow,
  state.json, dataset_info.json), or a DatasetDict (dataset_dict.json, a folder a split).

Listing reads Parquet footers (row counts), the dataset card and `datasets`' JSON files,
and each Arrow file through once to count its rows (an Arrow stream has no footer).
"""
import contextlib
import json
import os
import re
from typing import Dict, Iterator, List, Optional, Tuple

import pyarrow as pa

from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from components.image_example_gen.readers.hub_datasets import hf_features
from components.image_example_gen.readers.splits import is_split_name
from components.image_example_gen.readers.hub_datasets.hf_rows import (
    HfRows, arrow_batches, batches, column, file_path, open_parquet)
from components.image_example_gen.readers.hub_datasets.labelled_rows import split_roles
from core.storage import files

# Rows per unit (a Beam shard): about two image-folder shards (shards.SHARD_FILES).
UNIT_ROWS = 1000
CARD_FILE, DATA_DIR = "README.md", "data"
DICT_FILE, STATE_FILE, INFO_FILE = "dataset_dict.json", "state.json", "dataset_info.json"


def _is_parquet(name: str) -> bool:
    return name.lower().endswith(".parquet") and not name.startswith(".")


def _parquet_names(folder: str) -> List[str]:
    return [n for n in files.list_dir(folder)[1] if _is_parquet(n)]


def looks_like_hf_parquet(root: str) -> bool:
    """A .parquet file, or Parquet files in `root`, `root/data/` or split folders."""
    if not files.isdir(root):
        return _is_parquet(os.path.basename(root))
    dirs, names = files.list_dir(root)
    return any(map(_is_parquet, names)) or any(
        _parquet_names(os.path.join(root, d)) for d in dirs
        if d == DATA_DIR or is_split_name(d))


def looks_like_hf_disk(root: str) -> bool:
    """A `save_to_disk` folder: dataset_dict.json, or state.json with dataset_info.json."""
    if not files.isdir(root):
        return False
    names = set(files.list_dir(root)[1])
    return DICT_FILE in names or {STATE_FILE, INFO_FILE} <= names


def _split_name(file_name: str) -> str:
    """`train` of train-00000-of-00003.parquet or train.parquet; '' for 0000.parquet."""
    name = re.split(r"[-.]", file_name, maxsplit=1)[0]
    return "" if name.isdigit() else name


def _parquet_files(root: str) -> List[Tuple[str, str]]:
    """(relpath, split name) of every Parquet file: in root, data/ (split from the file
    name) or <split>/ folders (split from the folder)."""
    if not files.isdir(root):
        return [("", _split_name(os.path.basename(root)))]
    dirs, names = files.list_dir(root)
    found = [(n, _split_name(n)) for n in names if _is_parquet(n)]
    for folder in (d for d in dirs if not d.startswith(".")):
        found += [(f"{folder}/{n}", _split_name(n) if folder == DATA_DIR else folder)
                  for n in _parquet_names(os.path.join(root, folder))]
    return found


def _group_units(metadata, relpath: str, split: Optional[str],
                 columns: hf_features.Columns) -> List[HfRows]:
    """Consecutive row groups of one Parquet file, UNIT_ROWS rows or more a unit."""
    units, first, start, row = [], 0, 0, 0
    for group in range(metadata.num_row_groups):
        row += metadata.row_group(group).num_rows
        if row - start >= UNIT_ROWS or group == metadata.num_row_groups - 1:
            units.append(HfRows(relpath, start, row, split, columns.image, columns.label,
                                columns.string_labels, first, group + 1))
            first, start = group + 1, row
    return units


def _card(root: str) -> hf_features.Declared:
    path = os.path.join(root, CARD_FILE)
    if not files.isdir(root) or not files.exists(path):
        return hf_features.Declared()
    return hf_features.from_card(files.read_text(path))


def _named_by_values(declared: hf_features.Declared, columns: hf_features.Columns) -> bool:
    """Whether class names come from the label values (no names declared for them)."""
    return columns.string_labels or columns.label not in declared.names


def _label_values(batch, columns: hf_features.Columns) -> set:
    return {v for v in column(batch, columns.label).to_pylist() if v is not None}


def _class_names(root: str, units: List[HfRows], declared: hf_features.Declared,
                 columns: hf_features.Columns, values: Optional[set]) -> List[str]:
    """Declared names in their order; else string labels sorted by code point, or ids
    0..max as names, from the label values (`values`, else a pass over the column)."""
    if not _named_by_values(declared, columns):
        return declared.names[columns.label]
    if values is None:
        values = set().union(*(_label_values(batch, columns) for unit in units
                               for batch in batches(root, unit, [columns.label])))
    if columns.string_labels:
        return sorted(values)
    return [str(i) for i in range(max(values) + 1)] if values else []


def listing_of(root: str, units: List[HfRows], declared, columns, unused, fmt,
               values: Optional[set] = None) -> Listing:
    """The Listing of a dataset's units, with its class names (`values`: the label
    values, when the caller has read them all)."""
    classes = _class_names(root, units, declared, columns, values)
    if not classes:
        raise DatasetError(f"--data {root}: no labels in column {columns.label!r}")
    return Listing(classes=classes, files=units, format=fmt, unused=unused)


def list_hf_parquet(root: str, options: IngestOptions) -> Listing:
    """Parquet shards in the Hub's layout (data/train-00000-of-00003.parquet, ...).

    Class names: the card's (README.md) or the schema metadata's ClassLabel names,
    in their order; string labels sorted; integer labels without names 0..max.

    Raises:
      DatasetError: no Parquet file, no image or label column, or bad splits.
    """
    found = _parquet_files(root)
    if not found:
        raise DatasetError(f"--data {root}: no .parquet files in it, data/ or split folders "
                           "(the Hub's converted <config>/<split>/*.parquet: point --data at "
                           "the config's folder)")
    roles, unused = split_roles({split for _, split in found}, root)
    units, declared, columns = [], _card(root), None
    for relpath, split in ((p, s) for p, s in found if s in roles):
        with _readable(file_path(root, relpath), "Parquet"):
            with open_parquet(file_path(root, relpath)) as parquet:
                if columns is None:
                    declared = hf_features.merged(declared, hf_features.from_schema(
                        parquet.schema_arrow))
                    columns = hf_features.choose_columns(parquet.schema_arrow, declared,
                                                         options, file_path(root, relpath))
                units += _group_units(parquet.metadata, relpath, roles[split], columns)
    return listing_of(root, units, declared, columns, unused, "hf-parquet")


@contextlib.contextmanager
def _readable(path: str, kind: str) -> Iterator[None]:
    """pyarrow's errors on a file that is not what it should be, as a DatasetError."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        raise DatasetError(f"{path}: not a readable {kind} file ({e})") from None


def _disk_splits(root: str) -> Dict[str, str]:
    """{split name: folder relative to root} of a DatasetDict; {'': ''} for one Dataset."""
    if not files.exists(os.path.join(root, DICT_FILE)):
        return {"": ""}
    splits = json.loads(files.read_text(os.path.join(root, DICT_FILE))).get("splits") or []
    return {name: name for name in splits}


def _disk_files(root: str, folder: str) -> List[str]:
    """A Dataset folder's Arrow files, as state.json lists them (else *.arrow, sorted)."""
    state = os.path.join(root, folder, STATE_FILE)
    names = [d["filename"] for d in json.loads(files.read_text(state)).get("_data_files", [])
             ] if files.exists(state) else []
    names = names or [n for n in files.list_dir(os.path.join(root, folder))[1]
                      if n.endswith(".arrow")]
    return [f"{folder}/{n}" if folder else n for n in names]


def _info_features(root: str, folder: str) -> hf_features.Declared:
    info = os.path.join(root, folder, INFO_FILE)
    if not files.exists(info):
        return hf_features.Declared()
    return hf_features.from_features(json.loads(files.read_text(info)).get("features"))


def list_hf_disk(root: str, options: IngestOptions) -> Listing:
    """A `datasets` save_to_disk folder: one Dataset, or a DatasetDict of split folders.

    Class names: dataset_info.json's (else the Arrow schema metadata's) ClassLabel names.

    Raises:
      DatasetError: no Arrow file, no image or label column, or bad splits.
    """
    splits = _disk_splits(root)
    roles, unused = split_roles(splits, root)
    units, declared, columns = [], _info_features(root, splits[next(iter(roles))]), None
    values = set()  # label values, read in the same pass (an Arrow file is read whole)
    for name, role in roles.items():
        for relpath in _disk_files(root, splits[name]):
            rows = 0
            with _readable(os.path.join(root, relpath), "Arrow"):
                for batch in arrow_batches(os.path.join(root, relpath)):
                    if columns is None:
                        declared = hf_features.merged(declared, hf_features.from_schema(
                            batch.schema))
                        columns = hf_features.choose_columns(batch.schema, declared, options,
                                                             os.path.join(root, relpath))
                    rows += batch.num_rows
                    if _named_by_values(declared, columns):
                        values |= _label_values(batch, columns)
            if columns is not None:
                units.append(HfRows(relpath, 0, rows, role, columns.image, columns.label,
                                    columns.string_labels))
    if not units:
        raise DatasetError(f"--data {root}: no Arrow data files (data-*.arrow)")
    return listing_of(root, units, declared, columns, unused, "hf-disk", values)
