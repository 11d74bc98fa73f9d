"""`imagepipe monitor --labels FILE`: the true classes of some records, and the accuracy on them.

The file is CSV (`id,label` rows, a header row allowed) or JSON lines
({"id": ..., "label": ...}), local or gs://. A record's id (an image's path, a
request id) is matched exactly, else by its file name, so labels written
against the files' names still match a window read from a bucket. A label is a
class name, or a class id when no class has that name.
"""
import csv
import io
import json
import os
from typing import Dict, Iterable, List, Optional, Tuple

from core.storage import files
from core.errors import UsageError

FLAG = "--labels"


def _rows(path: str, text: str) -> Iterable[Tuple[str, str]]:
    if path.endswith((".jsonl", ".json")):
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    row = json.loads(line)
                    yield str(row["id"]), str(row["label"])
                except (ValueError, KeyError, TypeError):
                    raise UsageError(f"{FLAG} {path}:{number}: not a JSON object with "
                                     '"id" and "label"') from None
        return
    for number, row in enumerate(csv.reader(io.StringIO(text)), 1):
        if not row or (number == 1 and [c.strip().lower() for c in row] == ["id", "label"]):
            continue
        if len(row) != 2:
            raise UsageError(f"{FLAG} {path}:{number}: expected 2 columns id,label, "
                             f"got {len(row)}")
        yield row[0].strip(), row[1].strip()


def read_labels(path: str) -> Dict[str, str]:
    """{record id: label} from a CSV or JSON lines file; UsageError naming --labels."""
    try:
        text = files.read_text(path)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{FLAG} {path}: cannot be read ({e})") from None
    found = dict(_rows(path, text))
    if not found:
        raise UsageError(f"{FLAG} {path}: no id,label rows")
    return found


def class_id(label: str, names: List[str]) -> Optional[int]:
    """The class id of a label: its name's position, else the label read as an id."""
    if label in names:
        return names.index(label)
    return int(label) if label.isdigit() and int(label) < len(names) else None


def _by_name(labels: Dict[str, str]) -> Dict[str, str]:
    """{file name: label} for the names only one labelled id has."""
    seen: Dict[str, List[str]] = {}
    for key, label in labels.items():
        seen.setdefault(os.path.basename(key), []).append(label)
    return {name: found[0] for name, found in seen.items() if len(found) == 1}


def matched(answers: Iterable[Tuple[str, int]], labels: Dict[str, str],
            names: List[str]) -> Tuple[int, int]:
    """(labelled records, correct answers) of (record id, predicted class id) pairs."""
    by_name, labelled, correct = _by_name(labels), 0, 0
    for record_id, predicted in answers:
        label = labels.get(record_id, by_name.get(os.path.basename(record_id)))
        truth = None if label is None else class_id(label, names)
        if truth is None:
            continue
        labelled += 1
        correct += int(truth == predicted)
    return labelled, correct


def accuracy(labelled: int, correct: int, reference: dict, settings) -> Optional[dict]:
    """The accuracy measure, or None with fewer labelled records than settings.min_labeled."""
    if labelled < settings.min_labeled:
        return None
    return {"value": round(correct / labelled, 6), "threshold": settings.accuracy_drop,
            "reference": reference["eval"]["accuracy"], "labeled": labelled}
