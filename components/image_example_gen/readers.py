"""read_unit: turn one listed unit into (split, tf.Example) pairs or skipped records.

Runs on Beam workers. A skipped record is {"path", "reason"}; a split of
None means "hash the example's filename into a split".
"""
import os
from typing import Iterator, List, Optional, Union

import tensorflow as tf

from components.image_example_gen import encode
from components.image_example_gen.arrays import ArrayChunk, encode_png, read_chunk
from components.image_example_gen.folder_tree import DatasetError, ImageFile
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.tfrecords import RecordFile, iter_records

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


def _read_array_chunk(chunk: ArrayChunk, root: str, classes: List[str],
                      options: IngestOptions) -> Iterator[Item]:
    """Arrays were validated at listing (dtype, shape, counts): encode, no decode."""
    images, labels, name = read_chunk(chunk, root)
    height, width = images.shape[1:3]
    shape = (height, width, images.shape[3] if images.ndim == 4 else 1)
    if height * width > options.max_pixels:
        raise DatasetError(f"{name}: {height}x{width} images are over the limit of "
                           f"{options.max_pixels} pixels (--max-pixels)")
    for offset, (pixels, label) in enumerate(zip(images, labels)):
        yield chunk.split, encode.make_example(
            encode_png(pixels), "png", shape, f"{name}#{chunk.start + offset}", int(label),
            classes[int(label)])


def _record_to_item(record: bytes, name: str,
                    options: IngestOptions) -> Union[dict, tf.train.Example]:
    """Our example from one foreign record, or a skipped record saying why."""
    feature = tf.train.Example.FromString(record).features.feature
    image, label = feature.get(options.image_key), feature.get(options.label_key)
    if image is None or not image.bytes_list.value or label is None \
            or not label.int64_list.value:
        return {"path": name, "reason": f"missing {options.image_key} or {options.label_key}"}
    label_id = label.int64_list.value[0]
    text = feature.get("image/class/text")
    class_name = text.bytes_list.value[0].decode("utf-8") if text is not None and \
        text.bytes_list.value else str(label_id)
    try:
        return encode.image_to_example(image.bytes_list.value[0], name, label_id,
                                       class_name, options.max_pixels)
    except encode.BadImageError as e:
        return {"path": name, "reason": str(e)}


def _read_record_file(unit: RecordFile, root: str, options: IngestOptions) -> Iterator[Item]:
    path = os.path.join(root, unit.path) if unit.path else root
    name = unit.path or os.path.basename(root)
    count = 0  # records read so far; the next one is the first unreadable
    try:
        for record in iter_records(path):
            item = _record_to_item(record, f"{name}#{count}", options)
            count += 1
            yield item if isinstance(item, dict) else (unit.split, item)
    except tf.errors.OpError as e:  # truncated or corrupt: keep what was read, report the rest
        yield {"path": f"{name}#{count}+", "reason": f"unreadable TFRecord: {e.message}"}


def read_unit(unit, root: str, classes: Optional[List[str]],
              options: IngestOptions) -> Iterator[Item]:
    """Dispatches on the unit's type; see the module docstring for what it yields."""
    if isinstance(unit, ImageFile):
        return _read_image_file(unit, root, classes, options)
    if isinstance(unit, ArrayChunk):
        return _read_array_chunk(unit, root, classes, options)
    if isinstance(unit, RecordFile):
        return _read_record_file(unit, root, options)
    raise TypeError(f"unknown unit type {type(unit).__name__}")
