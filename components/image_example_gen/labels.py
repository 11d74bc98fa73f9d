"""The label vocabulary file: class names, one per line, in label-id order.

Ingestion writes it beside the examples; the Trainer reads it there, and
copies it into the SavedModel's assets.extra/ and the TFLite push, where
`imagepipe predict` reads it. It imports TensorFlow (tf.io.gfile reads gs://
too), so the CLI imports it only where TensorFlow is loaded anyway.
"""
from typing import List

import tensorflow as tf

LABELS_FILE = "labels.txt"


def read_labels(path: str) -> List[str]:
    """Class names in label-id order from a labels.txt (local or gs://)."""
    with tf.io.gfile.GFile(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]
