"""List a class-per-folder image tree: which files are images of which class.

Pure file-system logic through core/storage (no TensorFlow for local
trees; one listing call per folder on a bucket): the executor calls it once
on the launcher, before Beam starts, so the label vocabulary is fixed for
all splits and workers.
"""
import dataclasses
import os
from typing import Dict, List, Optional, Tuple

from components.image_example_gen.readers import splits as split_names
from core.contract import EVAL, TRAIN
from core.storage import files

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif")


class DatasetError(ValueError):
    """The dataset cannot be ingested; the message names the path and the fix."""


@dataclasses.dataclass(frozen=True)
class ImageFile:
    """One image to ingest: path relative to the dataset root, label, and split if fixed."""

    relpath: str
    label: int
    split: Optional[str] = None


@dataclasses.dataclass
class Listing:
    """What a dataset holds: classes in label-id order and the units to read.

    `files` holds the units: ImageFile for trees, ArrayChunk for IDX/npz,
    RecordFile for TFRecords.
    `classes` is None when labels are only known after reading (TFRecords).
    """

    classes: Optional[List[str]]
    files: List = dataclasses.field(default_factory=list)
    ignored: int = 0
    empty_classes: List[str] = dataclasses.field(default_factory=list)
    format: str = "folder"
    unused: List[str] = dataclasses.field(default_factory=list)
    # Files found but not listable, as {"path", "reason"}: reported with the skipped.
    skipped: List[dict] = dataclasses.field(default_factory=list)
    # --groups: relpath -> group, for the examples that carry one (readers/formats.py).
    groups: Dict[str, str] = dataclasses.field(default_factory=dict)


def splits_hashed(listing: Listing) -> bool:
    """Whether ingestion hashes paths into splits: no unit has a split of its own
    (train/ and eval/ folders, IDX t10k files, an .npz's x_test, TFRecord splits)."""
    return not any(getattr(unit, "split", None) for unit in listing.files)


def is_image_name(name: str) -> bool:
    """Whether a file name has an image extension we ingest (any case)."""
    return name.lower().endswith(IMAGE_EXTENSIONS) and not name.startswith(".")


def _subdirs(root: str) -> Tuple[List[str], int]:
    """Visible sub-folders of `root`, sorted, and how many other entries there were."""
    dirs, names = files.list_dir(root)
    visible = [d for d in dirs if not d.startswith(".")]
    return visible, len(names) + len(dirs) - len(visible)


def _utf8(name: str) -> bool:
    """Names that are not valid UTF-8 reach Python as surrogate escapes; tf.Example
    strings, labels.txt and the reports need UTF-8."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def printable(path: str) -> str:
    """A path with undecodable bytes shown as \\xNN, for messages and reports."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _images_per_class(root: str, prefix: str = ""
                      ) -> Tuple[Dict[str, List[str]], List[str], int, List[dict]]:
    """({class: sorted image names}, empty class folders, ignored entry count,
    skipped records for names that are not UTF-8)."""
    names, ignored = _subdirs(root)
    per_class, empty, bad = {}, [], []
    for name in names:
        if not _utf8(name):
            bad.append({"path": printable(f"{prefix}{name}/"),
                        "reason": "folder name is not valid UTF-8; rename it"})
            continue
        images = []
        subdirs, names_here = files.list_dir(os.path.join(root, name))
        ignored += len(subdirs)
        for file_name in names_here:
            if not is_image_name(file_name):
                ignored += 1
            elif _utf8(file_name):
                images.append(file_name)
            else:
                bad.append({"path": printable(f"{prefix}{name}/{file_name}"),
                            "reason": "file name is not valid UTF-8; rename it"})
        if images:
            per_class[name] = images
        else:
            empty.append(name)
    return per_class, empty, ignored, bad


def split_dirs(root: str) -> Optional[Dict[str, str]]:
    """{split: folder} if `root` holds train/ plus an eval-like folder (readers/splits.py),
    else None: its folders are classes."""
    names, _ = _subdirs(root)
    choice = split_names.choose(name for name in names if split_names.is_split_name(name))
    if choice.train is None or choice.eval is None:
        return None
    return {TRAIN: choice.train, EVAL: choice.eval}


def _check_root(root: str) -> None:
    if not files.exists(root):
        raise DatasetError(f"--data {root}: no such file or directory")
    if not files.isdir(root):
        raise DatasetError(f"--data {root}: not a directory of class folders")


def list_class_folders(root: str) -> Listing:
    """Lists `root/<class>/<image>`, or `root/<split>/<class>/<image>` with split folders.

    Class names sorted give label ids 0..N-1 (over all splits). Hidden files
    and files without an image extension are ignored and counted. A folder
    with no image file is not a class (it is listed in `empty_classes`), so
    label ids stay dense. With split folders (train/ plus eval/, validation/,
    val/ or test/, first found wins), the folders fix each image's split.

    Raises:
      DatasetError: `root` is missing, not a folder, or holds no images.
    """
    _check_root(root)
    splits = split_dirs(root)
    trees = {None: ""} if splits is None else {s: d + "/" for s, d in splits.items()}
    found, empty, ignored, bad = {}, set(), 0, []
    for split, prefix in trees.items():
        per_class, no_images, not_listed, bad_names = _images_per_class(
            os.path.join(root, prefix), prefix)
        found[split] = (prefix, per_class)
        empty.update(no_images)
        ignored += not_listed
        bad += bad_names
    classes = sorted({c for _, per_class in found.values() for c in per_class})
    if not classes:
        raise DatasetError(
            f"--data {root}: found no images; expected class folders such as "
            f"{root}/cat/1.jpg with extensions {', '.join(IMAGE_EXTENSIONS)}")
    label = {name: i for i, name in enumerate(classes)}
    images = [ImageFile(f"{prefix}{name}/{image}", label[name], split)
              for split, (prefix, per_class) in found.items()
              for name in classes for image in per_class.get(name, [])]
    unused = [] if splits is None else sorted(set(_subdirs(root)[0]) - set(splits.values()))
    return Listing(classes=classes, files=images, ignored=ignored,
                   empty_classes=sorted(empty - set(classes)), unused=unused, skipped=bad)
