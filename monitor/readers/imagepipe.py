"""`imagepipe`: imagepipe's own batch predictions, `imagepipe predict --data DATA
--output FILE.jsonl` (prediction/batch_io.py): a row per image,
{"path", "class", "probability", "top_k": [{"class", "probability"}, ...]}, or
{"path", "error"} for an image that could not be classified.

A row becomes a Record with the logged answer: `predicted` (the class name's id
among the served model's labels) and `confidence`; every class's probabilities
too where top_k names them all (--top-k at least the class count). The image is
read from `path` where it still exists, for the input measures; a TFRecord
source's ids are file names inside the records, and stay without an image.
"""
from typing import Dict, Iterable, Iterator, Optional, Sequence

import numpy as np

from core.storage import files
from monitor.readers.lines import Line, each_object
from monitor.readers.registry import keys_of, reader
from monitor.records import BadRecord, Item, Record


def _is_prediction_row(sample) -> bool:
    keys = keys_of(sample)
    return "path" in keys and bool(keys & {"class", "error"})


@reader("imagepipe", sniff=_is_prediction_row)
def read_predictions(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """Records of every row, in order; an error row is a BadRecord with its error."""
    ids = {name: i for i, name in enumerate(labels)}
    return each_object(paths, lambda line: [_row_record(line, ids)])


def _row_record(line: Line, ids: Dict[str, int]) -> Item:
    row = line.value
    path = str(row.get("path") or line.id)
    if row.get("error") or "class" not in row:
        return BadRecord(path, str(row.get("error") or "a row without a class"))
    if ids and row["class"] not in ids:
        return BadRecord(path, f"class {row['class']!r} is not one of the model's labels")
    return Record(path, image=_image(path), probabilities=_all_classes(row, ids),
                  predicted=ids.get(row["class"]),
                  confidence=float(row.get("probability", np.nan)))


def _image(path: str) -> Optional[bytes]:
    """The image, where `path` still names a readable file."""
    try:
        return files.read_bytes(path) if files.isfile(path) else None
    except Exception:  # noqa: BLE001  (gone or unreadable: the logged answer still counts)
        return None


def _all_classes(row: dict, ids: dict) -> Optional[np.ndarray]:
    """Every class's probability, where the row's top_k names every label."""
    top = row.get("top_k") or []
    if not ids or len(top) < len(ids) or any(e.get("class") not in ids for e in top):
        return None
    found = np.zeros(len(ids), np.float32)
    for entry in top:
        found[ids[entry["class"]]] = entry["probability"]
    return found
