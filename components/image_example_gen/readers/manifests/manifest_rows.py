"""A manifest's rows to a Listing: the checks every manifest format shares.

The format readers (import_files.py, csv_manifest.py) parse rows into
`Row`s and report the rows they cannot parse; `list_rows` then checks each row (its
split, its label, the allowed roots, duplicates, second labels, missing images), numbers
the classes and fixes the splits. A refused row is skipped with its file and row number
(`manifest.csv:12`) and the reason, and reported with the skipped files; with --strict
the listing fails instead (exit 2), naming the first rows.
"""
import dataclasses
import os
from typing import Dict, List, Optional, Tuple

from core.contract import EVAL, TRAIN
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.manifests import manifest_paths
from components.image_example_gen.readers import splits as split_names
from components.image_example_gen.readers.folder_tree import (DatasetError, ImageFile,
                                                              Listing, is_image_name)
from core.storage import files

# ML_USE (Vertex AI) and split-column values, any case: the split they name, in
# readers/splits.py's names (which of them is eval is chosen there); None: no split of
# its own.
SPLIT_VALUES = {"training": TRAIN, "train": TRAIN, "validation": "validation",
                "valid": "validation", "val": "val", "eval": "eval", "test": "test",
                "unassigned": None, "": None}
SHOWN = 5  # bad rows named in a --strict error


@dataclasses.dataclass(frozen=True)
class Row:
    """One image row of a manifest, as written: its row number (1-based, as an editor
    numbers lines), the image, its label and its split (ML_USE) cell."""

    number: int
    image: str
    label: Optional[str]
    use: Optional[str] = None


def row_name(manifest: str, number: int) -> str:
    """How reports name a row: `labels.csv:12`."""
    return f"{os.path.basename(manifest)}:{number}"


def looks_like_image(cell: str) -> bool:
    """Whether a cell names an image: a URI, or a path with an image extension."""
    cell = cell.strip()
    return files.is_remote(cell) or is_image_name(os.path.basename(cell))


def unknown_use(value: str, what: str = "ML_USE") -> str:
    """Why a row's ML_USE (or split) cell is refused."""
    return f"unknown {what} {value!r}; expected training, validation, test or unassigned"


def is_split_value(cell: str) -> bool:
    """Whether a cell is an ML_USE or split value (any case)."""
    return cell.strip().lower() in SPLIT_VALUES and cell.strip() != ""


class RowChecks:
    """The checks of one manifest's rows, and the rows refused so far."""

    def __init__(self, manifest: str, options: IngestOptions):
        self.manifest = manifest
        self.folder = manifest_paths.parent(manifest)
        # --image-folder: where relative paths start; the user named it, so it is allowed.
        self.images = (self.folder if not options.image_folder else
                       manifest_paths.location(self.folder, options.image_folder))
        extra = [r for r in (options.allowed_root, options.image_folder and self.images) if r]
        self.roots = manifest_paths.allowed_roots(manifest, ",".join(extra))
        self._check = manifest_paths.RootCheck(self.roots)
        self._names = manifest_paths.FolderNames()
        self.skipped: List[dict] = []
        self._seen: Dict[str, Row] = {}

    def refuse(self, number: int, reason: str) -> None:
        """Skips a row, saying why."""
        self.skipped.append({"path": row_name(self.manifest, number), "reason": reason})

    def accepted(self, row: Row) -> Optional[Tuple[str, Optional[str]]]:
        """(location, split) of a row that passes, else None (refused, with the reason)."""
        use = (row.use or "").strip().lower()
        if use not in SPLIT_VALUES:
            return self.refuse(row.number, unknown_use(row.use, "ML_USE/split"))
        if not (row.image or "").strip():
            return self.refuse(row.number, "no image path")
        if not (row.label or "").strip():
            return self.refuse(row.number, f"{row.image}: no label")
        path = manifest_paths.location(self.images, row.image.strip())
        if not is_image_name(os.path.basename(path)):
            found = self._names.with_extension(path)
            if len(found) > 1:
                return self.refuse(row.number, f"{row.image}: names {len(found)} files ("
                                   f"{', '.join(map(os.path.basename, found))}); give the "
                                   "file name with its extension")
            path = found[0] if found else path
        if not self._check.allowed(path):
            return self.refuse(row.number, f"{row.image}: outside the allowed roots "
                               f"({', '.join(self.roots)}); add its folder with --allowed-root")
        first = self._seen.get(path)
        if first is not None:
            if first.label.strip() != row.label.strip():
                return self.refuse(row.number, (
                    f"{row.image}: a second label {row.label.strip()!r} (row {first.number} "
                    f"gave {first.label.strip()!r}): multi-label is not supported yet"))
            return self.refuse(row.number, f"{row.image}: duplicate of row {first.number}")
        self._seen[path] = row
        return path, SPLIT_VALUES[use]


def _check_splits(manifest: str, found: set, unassigned: int):
    """Splits given for some rows must leave train and eval something to hold."""
    if not found or unassigned:
        return
    if TRAIN not in found:
        raise DatasetError(f"--data {manifest}: no row is for training; give some rows "
                           "ML_USE training, or none a split (then all are hashed)")
    if found == {TRAIN}:
        raise DatasetError(f"--data {manifest}: every row is for training; give some rows "
                           "ML_USE validation or test, or none a split (then all are hashed)")


def list_rows(checks: RowChecks, rows: List[Row], strict: bool) -> Listing:
    """The Listing of a manifest's parsed rows; see the module docstring.

    Raises:
      DatasetError: no row is usable; splits are given but leave train or eval
        nothing; or `strict` and a row was refused.
    """
    kept = [(row, *found) for row in rows for found in [checks.accepted(row)] if found]
    unused = split_names.choose({split for *_, split in kept} - {None}).unused
    unused_rows = {name: sum(1 for *_, s in kept if s == name) for name in unused}
    kept = [(row, path, split) for row, path, split in kept if split not in unused]
    gone = manifest_paths.missing_images(path for _, path, _ in kept)
    for row, path, _ in kept:
        if path in gone:
            checks.refuse(row.number, f"{row.image}: no such image file ({path}"
                          + ("" if is_image_name(os.path.basename(path)) else
                             ", nor with an image extension") + ")")
    kept = [(row, path, split) for row, path, split in kept if path not in gone]
    _fail_if(checks, strict, bool(kept))
    _check_splits(checks.manifest, {split for *_, split in kept} - {None},
                  sum(1 for *_, split in kept if not split))
    classes = sorted({row.label.strip() for row, _, _ in kept})
    label = {name: i for i, name in enumerate(classes)}
    images = [ImageFile(manifest_paths.relpath_of(path, checks.folder), label[row.label.strip()],
                        None if not split else TRAIN if split == TRAIN else EVAL)
              for row, path, split in kept]
    return Listing(classes=classes, files=images, skipped=checks.skipped,
                   unused=[f"{name} ({count} rows)" for name, count in unused_rows.items()])


def _fail_if(checks: RowChecks, strict: bool, any_kept: bool) -> None:
    bad = checks.skipped
    named = "; ".join(f"{r['path']}: {r['reason']}" for r in bad[:SHOWN])
    if strict and bad:
        raise DatasetError(f"--strict: --data {checks.manifest}: {len(bad)} row(s) refused: "
                           f"{named}")
    if not any_kept:
        raise DatasetError(f"--data {checks.manifest}: no usable image rows"
                           + (f"; {len(bad)} refused, first: {named}" if bad else ""))
