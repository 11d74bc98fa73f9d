"""Manifests of the bundled digits (data/mnist_1k/png), in each documented layout.

Every row names a digit PNG by `prefix` + its path under the digits' folder, with its
class name as label and a split: every fifth image of a class is held out, alternately
`validation` and `test`, the rest `training`.
"""
import hashlib
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


# The digits as a pre-split tree and as split datasets, for the end-to-end runs per layout
# (tests/e2e/test_manifests.py locally, test_manifests_gcs.py in a bucket).
RUN_FLAGS = ["--epochs", "4", "--time-budget", "none"]  # short, and alike on every machine
FOLDERS = {"training": "train", "validation": "val", "test": "test"}
SPLITS = {"training": "train", "validation": "validation", "test": "test"}  # HF and TFDS
CLASSES = [str(d) for d in range(10)]


def write_digit_tree(root) -> List[DigitRow]:
    """The digits as train/, val/ and test/ folders under `root`; their rows by path there."""
    rows = []
    for image, label, use in digit_rows():
        relpath = f"{FOLDERS[use]}/{image}"
        (pathlib.Path(root) / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MNIST_PNG / image, pathlib.Path(root) / relpath)
        rows.append((relpath, label, use))
    return rows


def split_datasets(rows: List[DigitRow]) -> dict:
    """{split: [(PNG bytes, class id)]} of a digit tree's `rows`, in its splits, each in the
    order ingestion takes the tree's images (shards.plan_shards: a hash of their paths),
    to be written as one shard a split: the same examples in the same order."""
    splits = {name: [] for name in SPLITS.values()}
    for relpath, label, use in sorted(rows, key=lambda row: hashlib.sha256(
            row[0].encode("utf-8")).digest()):
        splits[SPLITS[use]].append(((MNIST_PNG / relpath.split("/", 1)[1]).read_bytes(),
                                    int(label)))
    return splits
