"""A split's images as the parity gate reads them: encoded bytes, then decoded two ways.

- `pixel_decoder` (core/images.py): as Transform decodes, for the SavedModel;
- `client_decoder`: as an on-device client decodes a file for the TFLite file.

The client is the TFLite Task Library's ImageClassifier (tflite-support 0.4.4), which
reads only the file's metadata: it decodes the whole file at full size, RGB, and
stretches it to the model's input with bilinear sampling and no antialiasing (libyuv's
ARGBScale, kFilterBilinear), aspect not kept, no crop. TensorFlow's JPEG decoder is not
its stb_image, nor its fixed-point bilinear TensorFlow's: on the flowers eval photos
the two inputs differed by 1.0 level of 255 on average (5 at most), and the file's
predictions on them agreed on 98.8-99.4% of photos, its accuracy within 2 photos of 655
(docs/results/2026-11-29-tflite-client.md). tests/e2e/test_tflite_client.py holds the
emulation to the real Task Library.
"""
import functools
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from core.contract import HEIGHT_KEY, IMAGE_KEY, LABEL_KEY, WIDTH_KEY
from core.images import to_channels
from core.storage import files as storage

Batch = Tuple[List[bytes], np.ndarray]  # (encoded images, labels)
Decoder = Callable[[tf.Tensor], tf.Tensor]  # [n] encoded -> [n, side, side, c] in [0, 255]


def _records(split_dir: str) -> Iterator[tf.train.Example]:
    files = sorted(storage.glob(f"{split_dir}/*.gz"))
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        yield tf.train.Example.FromString(record.numpy())


def split_batches(split_dir: str, batch: int = 64,
                  limit: Optional[int] = None) -> Iterator[Batch]:
    """A split's (encoded images, labels), `batch` examples at a time, in file order;
    a batch of bytes is all the gate holds, whatever the split's size."""
    encoded, labels = [], []
    for seen, example in enumerate(_records(split_dir), 1):
        feature = example.features.feature
        encoded.append(feature[IMAGE_KEY].bytes_list.value[0])
        labels.append(feature[LABEL_KEY].int64_list.value[0])
        if len(encoded) == batch or seen == limit:
            yield encoded, np.array(labels)
            encoded, labels = [], []
        if seen == limit:
            return
    if encoded:
        yield encoded, np.array(labels)


def decoded_split(split_dir: str, decode: Decoder,
                  limit: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """(pixels, labels) of a split's first `limit` images, decoded by `decode`."""
    batches = [(decode(tf.constant(encoded, tf.string)).numpy(), labels)
               for encoded, labels in split_batches(split_dir, limit=limit)]
    if not batches:
        raise ValueError(f"{split_dir}: no examples")
    return (np.concatenate([pixels for pixels, _ in batches]).astype(np.float32),
            np.concatenate([labels for _, labels in batches]))


def long_sides(split_dir: str, limit: Optional[int] = 1000) -> List[int]:
    """The longer side of each of the split's first `limit` images, from the sizes
    ingestion recorded (no decoding)."""
    sides = []
    for example in _records(split_dir):
        feature = example.features.feature
        sides.append(max(feature[HEIGHT_KEY].int64_list.value[0],
                         feature[WIDTH_KEY].int64_list.value[0]))
        if len(sides) == limit:
            break
    return sides


@functools.lru_cache(maxsize=None)
def client_decoder(side: int, channels: int) -> Decoder:
    """[n] encoded images -> [n, side, side, channels] float32 pixels in [0, 255], as the
    Task Library feeds a float model from a file: decoded whole (no JPEG DCT scaling,
    unlike Transform), stretched to `side` with bilinear sampling, no antialiasing."""
    def decode_one(data):
        image = to_channels(tf.io.decode_image(data, expand_animations=False), channels)
        image = tf.image.resize(image, [side, side], method="bilinear", antialias=False)
        # Rounded: the client resizes 8-bit pixels and feeds those.
        return tf.ensure_shape(tf.round(image), [side, side, channels])

    # Two at a time: a camera photo is held whole (12 MP: 144 MB as floats) while resized.
    return tf.function(
        lambda encoded: tf.map_fn(decode_one, encoded, parallel_iterations=2,
                                  fn_output_signature=tf.TensorSpec([side, side, channels],
                                                                    tf.float32)),
        input_signature=[tf.TensorSpec([None], tf.string)])
