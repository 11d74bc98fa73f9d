"""read_unit: turn one listed unit into (split, tf.Example) pairs or skipped records.

Runs on Beam workers. A skipped record is {"path", "reason"}; a split of
None means "hash the example's filename into a split".
"""
import os
from typing import Iterator, List, Optional, Union

import tensorflow as tf

from components.image_example_gen import encode
from components.image_example_gen.folder_tree import ImageFile
from components.image_example_gen.options import IngestOptions

Item = Union[dict, tuple]


def _read_image_file(unit: ImageFile, root: str, classes: List[str],
                     options: IngestOptions) -> Iterator[Item]:
    try:
        with tf.io.gfile.GFile(os.path.join(root, unit.relpath), "rb") as f:
            data = f.read()
        example = encode.image_to_example(data, unit.relpath, unit.label,
                                          classes[unit.label], options.max_pixels)
    except (encode.BadImageError, OSError, tf.errors.OpError) as e:
        yield {"path": unit.relpath, "reason": str(e)}
        return
    yield unit.split, example


def read_unit(unit, root: str, classes: Optional[List[str]],
              options: IngestOptions) -> Iterator[Item]:
    """Dispatches on the unit's type; see the module docstring for what it yields."""
    if isinstance(unit, ImageFile):
        return _read_image_file(unit, root, classes, options)
    raise TypeError(f"unknown unit type {type(unit).__name__}")
