"""Spans of the bundled digits (data/mnist_1k/png), as the continuous-training tests feed them."""
import pathlib
import shutil
from typing import Iterable, Optional

from tests.support.paths import MNIST_PNG

SUCCESS_FILE = "_SUCCESS"  # components.image_example_gen.span_window.SUCCESS_FILE


def make_span(target, *, source=MNIST_PNG, classes: Optional[Iterable[str]] = None,
              take: slice = slice(None), invert: bool = False,
              ready: bool = True) -> pathlib.Path:
    """Writes a class-per-folder span of digits under `target`; returns `target`.

    Args:
        target: the span's folder (created, with its parents).
        source: a class-per-folder tree of PNGs; the bundled 1,000 digits by default.
        classes: which class folders to take; all of `source`'s by default.
        take: which of each class's files, in name order (`slice(0, 10)`: the first ten).
        invert: light on dark becomes dark on light, which drifts on brightness;
            otherwise the files are copied byte for byte.
        ready: write the _SUCCESS marker of a finished upload; else the span is
            still arriving.
    """
    from PIL import Image, ImageOps
    source, target = pathlib.Path(source), pathlib.Path(target)
    names = list(classes) if classes is not None else sorted(
        p.name for p in source.iterdir() if p.is_dir())
    for name in names:
        (target / name).mkdir(parents=True, exist_ok=True)
        for png in sorted((source / name).iterdir())[take]:
            if invert:
                ImageOps.invert(Image.open(png).convert("L")).save(target / name / png.name)
            else:
                shutil.copyfile(png, target / name / png.name)
    target.mkdir(parents=True, exist_ok=True)
    if ready:
        (target / SUCCESS_FILE).write_bytes(b"")
    return target
