"""Vertex AI image classification import files: CSV and JSON Lines.

The layouts of https://cloud.google.com/vertex-ai/docs/image-data/classification/prepare-data:

    [ML_USE,]GCS_FILE_PATH[,LABEL]              CSV, no header
    {"imageGcsUri": "gs://b/1.jpg",
     "classificationAnnotation": {"displayName": "daisy"},
     "dataItemResourceLabels": {"aiplatform.googleapis.com/ml_use": "training"}}

Image paths may also be relative to the file's folder, absolute or `file://`, within
the allowed roots (readers/manifests/manifest_paths.py). A row that cannot be parsed is skipped
and reported with its file and row number; the checks every manifest shares are in
readers/manifests/manifest_rows.py.
"""
import csv
import io
import json
from typing import List, Optional, Tuple

from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from components.image_example_gen.readers.manifests.manifest_rows import (
    Row, RowChecks, is_split_value, list_rows, looks_like_image, unknown_use)
from core.storage import files

ML_USE_KEY = "aiplatform.googleapis.com/ml_use"


def read_manifest(path: str) -> str:
    """A manifest's text; DatasetError naming it when it is not UTF-8."""
    try:
        return files.read_text(path).lstrip("\ufeff")  # a spreadsheet's byte-order mark
    except UnicodeDecodeError as e:
        raise DatasetError(f"--data {path}: not UTF-8 text ({e.reason} at byte {e.start})")


def csv_rows(path: str, text: str) -> List[Tuple[int, List[str]]]:
    """[(row number, cells)] of CSV text, blank rows left out; a row's number is the line
    it ends on (a quoted cell may hold line breaks)."""
    reader, rows = csv.reader(io.StringIO(text)), []
    try:
        for cells in reader:
            if "".join(cells).strip():
                rows.append((reader.line_num, cells))
    except csv.Error as e:
        raise DatasetError(f"--data {path}: line {reader.line_num + 1}: not CSV ({e})") from None
    return rows


def _vertex_csv_row(number: int, cells: List[str], checks: RowChecks) -> Optional[Row]:
    """[ML_USE,]PATH[,LABEL] as a Row; None (refused) when the columns cannot be read."""
    cells = [cell.strip() for cell in cells]
    if len(cells) == 3:
        if cells[0] and not is_split_value(cells[0]):
            return checks.refuse(number, unknown_use(cells[0]))
        return Row(number, cells[1], cells[2], cells[0])
    if len(cells) == 2:
        if is_split_value(cells[0]):
            return Row(number, cells[1], None, cells[0])
        if looks_like_image(cells[1]) and not looks_like_image(cells[0]):
            return checks.refuse(number, unknown_use(cells[0]))
        return Row(number, cells[0], cells[1])
    if len(cells) == 1:
        return Row(number, cells[0], None)
    return checks.refuse(number, f"{len(cells)} columns; a Vertex AI CSV row is "
                         "[ML_USE,]GCS_FILE_PATH[,LABEL]")


def list_vertex_csv(path: str, options: IngestOptions) -> Listing:
    """Lists a Vertex AI CSV import file (no header): see the module docstring.

    Raises:
      DatasetError: the file cannot be read or has no usable row; with
        --strict, any refused row (readers/manifests/manifest_rows.py).
    """
    checks = RowChecks(path, options)
    rows = [_vertex_csv_row(number, cells, checks)
            for number, cells in csv_rows(path, read_manifest(path))]
    return list_rows(checks, [row for row in rows if row], options.strict)


def _labels(item: dict) -> List[str]:
    """The displayName of each annotation, in order, once each."""
    annotations = item.get("classificationAnnotations")
    if annotations is None:
        single = item.get("classificationAnnotation")
        annotations = [] if single is None else [single]
    names = [a.get("displayName") for a in annotations if isinstance(a, dict)]
    return list(dict.fromkeys(str(n) for n in names if n is not None))


def _vertex_json_row(number: int, line: str, checks: RowChecks) -> Optional[Row]:
    """One JSON line as a Row; None (refused) when it is not a Vertex AI image item."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as e:
        return checks.refuse(number, f"bad JSON: {e.msg} at column {e.colno}")
    image = item.get("imageGcsUri") if isinstance(item, dict) else None
    if not isinstance(image, str) or not image.strip():
        return checks.refuse(number, "no imageGcsUri string")
    labels = _labels(item)
    if len(labels) > 1:
        return checks.refuse(number, f"{image}: {len(labels)} labels ({', '.join(labels)}): "
                             "multi-label is not supported yet")
    resource_labels = item.get("dataItemResourceLabels")
    use = resource_labels.get(ML_USE_KEY) if isinstance(resource_labels, dict) else None
    return Row(number, image, labels[0] if labels else None, use)


def list_vertex_jsonl(path: str, options: IngestOptions) -> Listing:
    """Lists a Vertex AI JSON Lines import file: see the module docstring.

    Raises:
      DatasetError: as list_vertex_csv.
    """
    checks = RowChecks(path, options)
    rows = [_vertex_json_row(number, line, checks)
            for number, line in enumerate(read_manifest(path).splitlines(), 1)
            if line.strip()]
    return list_rows(checks, [row for row in rows if row], options.strict)
