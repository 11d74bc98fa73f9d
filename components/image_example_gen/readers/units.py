"""Reading listed units on Beam workers.

read_file_job prepares an image file for encode.encode_files; read_unit turns
an array chunk or a TFRecord file into encoded examples or skipped records
({"path", "reason"}).
"""
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import tensorflow as tf
from PIL import Image

from components.image_example_gen.data_health import hashing
from components.image_example_gen.encoding import encode
from components.image_example_gen.readers.arrays import ArrayChunk, encode_png, read_chunk
from components.image_example_gen.readers.folder_tree import DatasetError, ImageFile
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.tfrecords import RecordFile, iter_records, record_error
from components.image_example_gen.readers.hub_datasets.hf_rows import HfRows, read_hf_unit
from components.image_example_gen.readers.hub_datasets.tfds_folders import TfdsShard, read_tfds_unit
from core.storage import files

SplitOf = Callable[[str], str]
Groups = Dict[str, str]  # --groups: relpath -> group
# Remote image files read at once per shard: enough to hide a bucket's latency
# behind the encoder, few enough that a shard's bytes stay small in memory.
REMOTE_READERS = 16


def read_file_job(unit: ImageFile, root: str, classes: List[str], options: IngestOptions,
                  groups: Optional[Groups] = None) -> encode.FileJob:
    """What encode.encode_files needs to encode one image file.

    A local file is read by whoever encodes it; a remote one (gs://...) is
    read here, through core/storage, since encoders do not import TensorFlow.
    """
    job = encode.local_file_job(root, unit.relpath, unit.label, unit.split, classes,
                                options.buckets)._replace(group=(groups or {}).get(unit.relpath))
    if not files.is_remote(job.path):
        return job
    try:
        return job._replace(data=files.read_bytes(job.path), path="")
    except (OSError, tf.errors.OpError) as e:
        return job._replace(error=str(e), path="")


def read_file_jobs(units: List[ImageFile], root: str, classes: List[str],
                   options: IngestOptions, groups: Optional[Groups] = None
                   ) -> List[encode.FileJob]:
    """`read_file_job` of a shard's files, in order; remote files (a remote root, or a
    manifest's gs:// URIs) are read by REMOTE_READERS threads at once, since each read
    waits on the network."""
    read = lambda unit: read_file_job(unit, root, classes, options, groups)  # noqa: E731
    if not files.is_remote(root) and not remote_units(units):
        return [read(unit) for unit in units]
    with ThreadPoolExecutor(max_workers=REMOTE_READERS) as pool:
        return list(pool.map(read, units))


def remote_units(units: List[ImageFile]) -> bool:
    """Whether any of a listing's image files is remote by itself (a manifest's gs:// URI),
    so that it must be read here rather than by a local encoding worker."""
    return any(files.is_remote(unit.relpath) for unit in units)


# ITU-R 601 luma weights, as PIL's convert("L") uses them (encode.pixel_stats).
_LUMA = np.array([0.299, 0.587, 0.114])


def array_luminance(images: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(mean luminance 0..255, grayscale) of each uint8 image, at once."""
    pixels = images.reshape(len(images), -1, images.shape[3] if images.ndim == 4 else 1)
    colour = pixels[..., :3].astype(np.int16)
    if colour.shape[-1] == 1:
        return colour[..., 0].mean(axis=1), np.ones(len(images), bool)
    spread = (colour.max(axis=-1) - colour.min(axis=-1)).max(axis=1)
    return (colour @ _LUMA).mean(axis=1), spread <= encode.GRAY_TOLERANCE


def array_pixel_stats(images: np.ndarray) -> List[Tuple[int, int]]:
    """encode.pixel_stats' (brightness bucket, grayscale) of each uint8 image, at once.

    `images` is NxHxW or NxHxWxC (C 1, 3 or 4; alpha is ignored). Taken on
    the full images, not a thumbnail: array datasets are small images
    (MNIST's 28 px, CIFAR's 32), within encode.THUMBNAIL_SIDE already.
    """
    luminance, grayscale = array_luminance(images)
    return [(encode.brightness_bucket(mean), int(gray))
            for mean, gray in zip(luminance.tolist(), grayscale.tolist())]


def array_health(relpath: str, pixels: np.ndarray) -> encode.Health:
    """encode.Health of an array image: its raw pixels stand for a file's bytes.

    No image is made for one too small for a perceptual hash (MNIST's 28 px): making
    it cost more than the hashes (docs/data_health.md#cost).
    """
    phash = None
    if hashing.gets_perceptual_hash(pixels.shape[1::-1]):
        phash = encode.perceptual_hash(Image.fromarray(
            pixels[..., 0] if pixels.ndim == 3 and pixels.shape[2] == 1 else pixels))
    return relpath, hashing.content_hash(pixels.tobytes()), phash


def _read_array_chunk(chunk: ArrayChunk, root: str, classes: List[str], options: IngestOptions,
                      split_of: SplitOf, groups: Groups) -> Iterator[encode.Encoded]:
    """Arrays were validated at listing (dtype, shape, counts): encode, no decode."""
    images, labels, name = read_chunk(chunk, root)
    height, width = images.shape[1:3]
    shape = (height, width, images.shape[3] if images.ndim == 4 else 1)
    if height * width > options.max_pixels:
        raise DatasetError(f"{name}: {height}x{width} images are over the limit of "
                           f"{options.max_pixels} pixels (--max-pixels)")
    luminance, grayscale = array_luminance(images)
    for offset, (pixels, label) in enumerate(zip(images, labels)):
        relpath = f"{name}#{chunk.start + offset}"
        mean = float(luminance[offset])
        yield encode.encoded_example(
            chunk.split or split_of(relpath), encode_png(pixels), "png", shape, relpath,
            int(label), classes[int(label)],
            (encode.brightness_bucket(mean), int(grayscale[offset])), groups.get(relpath),
            array_health(relpath, pixels) if hashing.ENABLED else None, brightness=mean)


def _record_to_item(record: bytes, name: str, split: str, options: IngestOptions,
                    groups: Groups) -> encode.Encoded:
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
        return encode.encode_image(image.bytes_list.value[0], split, name, label_id,
                                   class_name, options.max_pixels, groups.get(name),
                                   hashing.ENABLED)
    except encode.BadImageError as e:
        return {"path": name, "reason": str(e)}


def _read_record_file(unit: RecordFile, root: str, options: IngestOptions,
                      split_of: SplitOf, groups: Groups) -> Iterator[encode.Encoded]:
    path = os.path.join(root, unit.path) if unit.path else root
    name = unit.path or os.path.basename(root)
    count = 0  # records read so far; the next one is the first unreadable
    try:
        for record in iter_records(path):
            relpath = f"{name}#{count}"
            yield _record_to_item(record, relpath, unit.split or split_of(relpath), options,
                                  groups)
            count += 1
    except tf.errors.OpError as e:  # truncated or corrupt: keep what was read, report the rest
        yield {"path": f"{name}#{count}+", "reason": f"unreadable TFRecord: {record_error(e)}"}


def read_unit(unit, root: str, classes: Optional[List[str]], options: IngestOptions,
              split_of: SplitOf, groups: Optional[Groups] = None) -> Iterator[encode.Encoded]:
    """Encoded examples and skipped records of an array chunk, a TFRecord file, Hugging Face
    rows or a TFDS shard.

    `split_of(relpath)` decides the split of an example whose unit has none;
    `groups` gives examples their --groups group.
    """
    if isinstance(unit, ArrayChunk):
        return _read_array_chunk(unit, root, classes, options, split_of, groups or {})
    if isinstance(unit, RecordFile):
        return _read_record_file(unit, root, options, split_of, groups or {})
    if isinstance(unit, HfRows):
        return read_hf_unit(unit, root, classes, options, split_of, groups or {})
    if isinstance(unit, TfdsShard):
        return read_tfds_unit(unit, root, classes, options, split_of, groups or {})
    raise TypeError(f"unknown unit type {type(unit).__name__}")
