"""Manifests of the bundled digits (data/mnist_1k/png), in each documented layout.

Every row names a digit PNG by `prefix` + its path under the digits' folder, with its
class name as label and a split: every fifth image of a class is held out, alternately
`validation` and `test`, the rest `training`.
"""
import json
import pathlib
import shutil
from typing import List, Optional, Tuple

from tests.support.paths import MNIST_PNG

DigitRow = Tuple[str, str, str]  # (image path under the digits' folder, label, ML_USE)


def digit_rows(per_class: Optional[int] = None, source=MNIST_PNG) -> List[DigitRow]:
    """(relative path, label, ML_USE) of the digits, `per_class` of each (all: None)."""
    rows = []
    for label in sorted(p.name for p in pathlib.Path(source).iterdir() if p.is_dir()):
        names = sorted(p.name for p in (pathlib.Path(source) / label).iterdir())
        for i, name in enumerate(names[:per_class]):
            use = "training" if i % 5 else ("validation" if i % 10 == 0 else "test")
            rows.append((f"{label}/{name}", label, use))
    return rows


def write_vertex_csv(path, rows: List[DigitRow], prefix: str = "") -> str:
    """`ML_USE,PATH,LABEL` rows, no header."""
    text = "".join(f"{use},{prefix}{image},{label}\n" for image, label, use in rows)
    pathlib.Path(path).write_text(text)
    return str(path)


def write_vertex_jsonl(path, rows: List[DigitRow], prefix: str = "") -> str:
    """Vertex AI JSON Lines items."""
    lines = [json.dumps({"imageGcsUri": f"{prefix}{image}",
                         "classificationAnnotation": {"displayName": label},
                         "dataItemResourceLabels": {"aiplatform.googleapis.com/ml_use": use}})
             for image, label, use in rows]
    pathlib.Path(path).write_text("\n".join(lines) + "\n")
    return str(path)


def write_headed_csv(path, rows: List[DigitRow], prefix: str = "",
                     header: str = "filename,label,split") -> str:
    """A CSV with a header of path, label and split columns (train/validation/test)."""
    splits = {"training": "train", "validation": "validation", "test": "test"}
    body = "".join(f"{prefix}{image},{label},{splits[use]}\n" for image, label, use in rows)
    pathlib.Path(path).write_text(header + "\n" + body)
    return str(path)


def digits_beside(folder, per_class: Optional[int] = None) -> List[DigitRow]:
    """Copies the digits to `folder/<label>/<name>` (a manifest then sits beside its images);
    returns their rows."""
    rows = digit_rows(per_class)
    for image, _, _ in rows:
        target = pathlib.Path(folder) / image
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(MNIST_PNG / image, target)
    return rows
