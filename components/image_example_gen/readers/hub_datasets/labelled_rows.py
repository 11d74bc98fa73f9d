"""What the Hugging Face and TFDS readers share: which named split is train, eval or
unused, and one labelled row of image bytes to an example or a skipped record."""
from typing import Dict, Iterable, List, Optional, Tuple

from core.contract import EVAL, TRAIN
from components.image_example_gen.data_health import hashing
from components.image_example_gen.encoding import encode
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers import splits as split_names
from components.image_example_gen.readers.folder_tree import DatasetError


def split_roles(names: Iterable[str], root: str
                ) -> Tuple[Dict[str, Optional[str]], List[str]]:
    """({split name: TRAIN, EVAL or None (hashed)}, unused split names), as for folders.

    Train, eval and the unused splits are chosen as for every layout (readers/splits.py).
    A `train` split with no eval-like one is hashed into train and eval, as is a
    dataset of one split (any name).

    Raises:
      DatasetError: no splits, or several and none of them `train`.
    """
    names = sorted(set(names))
    if not names:
        raise DatasetError(f"--data {root}: the dataset names no splits")
    choice = split_names.choose(names)
    if choice.train is None:
        if len(names) > 1:
            raise DatasetError(f"--data {root}: splits {', '.join(names)} but no 'train' "
                               "split; point --data at one of them, or name one 'train'")
        return {names[0]: None}, []
    if choice.eval is None:
        return {choice.train: None}, choice.unused
    return {choice.train: TRAIN, choice.eval: EVAL}, choice.unused


def label_problem(label, classes: List[str]) -> str:
    """Why a row's label cannot be used ('' if it can): missing, or not a class id."""
    if label is None:
        return "no label"
    if not isinstance(label, int) or not 0 <= label < len(classes):
        return (f"label {label!r} is not one of the dataset's {len(classes)} classes "
                f"(ids 0..{len(classes) - 1})")
    return ""


def encode_row(data: Optional[bytes], label, relpath: str, split: str,
               classes: List[str], options: IngestOptions, groups: Dict[str, str],
               missing: str = "no image bytes in the row") -> encode.Encoded:
    """The example of one row (`relpath` is `file#row`), or a skipped record saying why.

    `label` is a class id; anything else (None, a name no class has) is skipped.
    `missing`: the reason given when `data` is None."""
    problem = label_problem(label, classes)
    if problem:
        return {"path": relpath, "reason": problem}
    if data is None:
        return {"path": relpath, "reason": missing}
    try:
        return encode.encode_image(data, split, relpath, label, classes[label],
                                   options.max_pixels, groups.get(relpath), hashing.ENABLED)
    except encode.BadImageError as e:
        return {"path": relpath, "reason": str(e)}
