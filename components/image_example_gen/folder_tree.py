"""List a class-per-folder image tree: which files are images of which class.

Pure file-system logic, no TensorFlow: the executor calls it once on the
launcher, before Beam starts, so the label vocabulary is fixed for all splits
and workers.
"""
import dataclasses
import os
from typing import List, Tuple

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif")


class DatasetError(ValueError):
    """The dataset cannot be ingested; the message names the path and the fix."""


@dataclasses.dataclass(frozen=True)
class ImageFile:
    """One image to ingest: its path relative to the dataset root, and its label."""

    relpath: str
    label: int


@dataclasses.dataclass
class Listing:
    """What a dataset tree holds: classes in label-id order and their images."""

    classes: List[str]
    files: List[ImageFile]
    ignored: int = 0
    empty_classes: List[str] = dataclasses.field(default_factory=list)


def is_image_name(name: str) -> bool:
    """Whether a file name has an image extension we ingest (any case)."""
    return name.lower().endswith(IMAGE_EXTENSIONS) and not name.startswith(".")


def _class_dirs(root: str) -> Tuple[List[str], int]:
    """Visible sub-folders of `root`, sorted, and how many other entries there were."""
    dirs, ignored = [], 0
    for entry in os.scandir(root):
        if entry.is_dir() and not entry.name.startswith("."):
            dirs.append(entry.name)
        else:
            ignored += 1
    return sorted(dirs), ignored


def list_class_folders(root: str) -> Listing:
    """Lists `root/<class>/<image>` files; class names sorted give label ids 0..N-1.

    Hidden files and files without an image extension are ignored and counted.
    A folder with no image file is not a class (it is reported in
    `empty_classes`), so label ids stay dense.

    Raises:
      DatasetError: `root` is missing, not a folder, or holds no images.
    """
    if not os.path.exists(root):
        raise DatasetError(f"--data {root}: no such file or directory")
    if not os.path.isdir(root):
        raise DatasetError(f"--data {root}: not a directory of class folders")
    names, ignored = _class_dirs(root)
    per_class = {}
    empty = []
    for name in names:
        images = []
        for entry in sorted(os.scandir(os.path.join(root, name)), key=lambda e: e.name):
            if entry.is_file() and is_image_name(entry.name):
                images.append(entry.name)
            else:
                ignored += 1
        if images:
            per_class[name] = images
        else:
            empty.append(name)
    if not per_class:
        raise DatasetError(
            f"--data {root}: found no images; expected class folders such as "
            f"{root}/cat/1.jpg with extensions {', '.join(IMAGE_EXTENSIONS)}")
    classes = sorted(per_class)
    files = [ImageFile(f"{name}/{image}", label)
             for label, name in enumerate(classes) for image in per_class[name]]
    return Listing(classes=classes, files=files, ignored=ignored, empty_classes=empty)
