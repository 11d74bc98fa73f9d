"""The eval examples the audit reads: encoded images, labels, relpaths; class names."""
import dataclasses
import os
from typing import List

import numpy as np
import tensorflow as tf
from tfx.utils import path_utils

from core.contract import (ASSETS_EXTRA, EVAL, FILENAME_KEY, IMAGE_KEY, LABELS_FILE,
                           LABEL_KEY, read_labels, split_dir, split_size)
from core.storage import files

# Eval examples audited, spread evenly over the split: predicting a larger photo
# split twice (TFMA already did once) would double the Evaluator's time.
MAX_EXAMPLES = 2048


@dataclasses.dataclass
class EvalExamples:
    """Parallel lists, in split order."""

    encoded: List[bytes]
    labels: np.ndarray  # int64 label ids
    paths: List[str]  # image/filename: the relpath under --data ("" if absent)


def read_eval_examples(examples_uri: str, limit: int = MAX_EXAMPLES) -> EvalExamples:
    """Up to `limit` eval examples; every k-th one when the split is larger."""
    names = files.glob(os.path.join(split_dir(examples_uri, EVAL), "*"))
    dataset = tf.data.TFRecordDataset(names, compression_type="GZIP")
    stride = -(-split_size(examples_uri, EVAL) // limit)  # ceil; 0 without a report
    if stride > 1:
        dataset = dataset.shard(stride, 0)
    spec = {IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
            LABEL_KEY: tf.io.FixedLenFeature([], tf.int64),
            FILENAME_KEY: tf.io.FixedLenFeature([], tf.string, default_value=b"")}
    encoded, labels, paths = [], [], []
    for batch in dataset.take(limit).batch(256):
        parsed = tf.io.parse_example(batch, spec)
        encoded += list(parsed[IMAGE_KEY].numpy())
        labels += list(parsed[LABEL_KEY].numpy())
        paths += [p.decode("utf-8") for p in parsed[FILENAME_KEY].numpy()]
    return EvalExamples(encoded, np.asarray(labels, np.int64), paths)


def class_names(examples_uri: str, model_uri: str, classes: int) -> List[str]:
    """labels.txt beside the examples, else the model's copy, else the ids as text."""
    for path in (os.path.join(examples_uri, LABELS_FILE),
                 os.path.join(path_utils.serving_model_dir(model_uri), ASSETS_EXTRA,
                              LABELS_FILE)):
        if files.exists(path):
            names = read_labels(path)
            if len(names) >= classes:
                return names
    return [str(i) for i in range(classes)]
