"""A CSV with a header that lists images (Kaggle's train.csv, Label Studio's CSV export).

    filename,label,split
    images/1.jpg,cat,train
    images/2.jpg,dog,validation

The path and label columns are --path-column and --label-column, or else the first
header (any case) among PATH_COLUMNS and LABEL_COLUMNS; the split column is
--split-column, or one of SPLIT_COLUMNS if there (optional). Rows are then checked as
every manifest's are (readers/manifests/manifest_rows.py), which also finds the file of
a path given without its extension (Kaggle's `id,breed` beside train/: --image-folder).
"""
from typing import List, Optional

from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from components.image_example_gen.readers.manifests.import_files import csv_rows, read_manifest
from components.image_example_gen.readers.manifests.manifest_rows import Row, RowChecks, list_rows

PATH_COLUMNS = ("filename", "file", "file_name", "filepath", "file_path", "image_path",
                "image", "image_id", "image_name", "img", "path", "image_url", "url", "id")
LABEL_COLUMNS = ("label", "class", "class_name", "category", "target", "labels", "choice",
                 "species", "breed")
SPLIT_COLUMNS = ("split", "ml_use", "subset", "set", "fold", "partition")


def _column(header: List[str], given: Optional[str], names, what: str, flag: str,
            path: str, required: bool = True) -> Optional[int]:
    """The index of a column: `given` (the flag), else the first of `names` present."""
    lowered = [cell.strip().lower() for cell in header]
    if given is not None:
        if given.strip().lower() not in lowered:
            raise DatasetError(f"{flag} {given}: no such column in {path}; its header is "
                               f"{', '.join(header)}")
        return lowered.index(given.strip().lower())
    found = [name for name in names if name in lowered]
    if found:
        return lowered.index(found[0])
    if required:
        raise DatasetError(f"--data {path}: no {what} column in the header "
                           f"({', '.join(header)}); name it with {flag}")
    return None


def header_names_a_path(cells: List[str]) -> bool:
    """Whether a header row has a column named as image paths usually are."""
    return any(cell.strip().lower() in PATH_COLUMNS for cell in cells)


def list_csv_manifest(path: str, options: IngestOptions) -> Listing:
    """Lists a headed CSV manifest: see the module docstring.

    Raises:
      DatasetError: no header, a column that cannot be found, no usable row; with
        --strict, any refused row.
    """
    rows = csv_rows(path, read_manifest(path))
    if not rows:
        raise DatasetError(f"--data {path}: empty; expected a header such as filename,label")
    header = rows[0][1]
    columns = [_column(header, options.path_column, PATH_COLUMNS, "image path",
                       "--path-column", path),
               _column(header, options.label_column, LABEL_COLUMNS, "label",
                       "--label-column", path),
               _column(header, options.split_column, SPLIT_COLUMNS, "split",
                       "--split-column", path, required=False)]
    checks = RowChecks(path, options)
    parsed = []
    for number, cells in rows[1:]:
        if len(cells) != len(header):
            checks.refuse(number, f"{len(cells)} columns; the header has {len(header)}")
            continue
        image, label, use = (None if i is None else cells[i] for i in columns)
        parsed.append(Row(number, image, label, use))
    return list_rows(checks, parsed, options.strict)
