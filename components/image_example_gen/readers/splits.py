"""Which of a dataset's own splits becomes train, which becomes eval, and which are unused.

One rule for every layout that names its splits: split folders (`train/`, `val/`), a
manifest's ML_USE or split column, Hugging Face and TFDS split names. `train` is train;
the first of EVAL_NAMES present is eval; any other named split is not read and is
reported as unused. What a layout does when train or eval is missing differs, and stays
with its reader: folders without both are class folders, a manifest hashes its rows with
no split, a Hugging Face or TFDS dataset of one split hashes it.
"""
import dataclasses
from typing import Iterable, List, Optional

TRAIN_NAME = "train"
# Splits that can be eval, in order of preference: `validation` beside `test` is eval, as
# a dataset's authors mean it to be (test stays untouched).
EVAL_NAMES = ("eval", "validation", "val", "test")


@dataclasses.dataclass(frozen=True)
class SplitChoice:
    """The split names read as train and eval (None: not among the names), and the rest."""

    train: Optional[str]
    eval: Optional[str]
    unused: List[str]


def choose(names: Iterable[str]) -> SplitChoice:
    """The train split, the eval split and the unused others, of the split names given."""
    names = sorted(set(names))
    train = TRAIN_NAME if TRAIN_NAME in names else None
    evals = [name for name in EVAL_NAMES if name in names]
    chosen = {train, evals[0] if evals else None}
    return SplitChoice(train, evals[0] if evals else None,
                       [name for name in names if name not in chosen])


def is_split_name(name: str) -> bool:
    """Whether a folder's name names a split (train or one of EVAL_NAMES)."""
    return name == TRAIN_NAME or name in EVAL_NAMES
