"""The monitoring reference: what `imagepipe monitor` compares production traffic with.

    write_reference(blessing_uri, names, labels, probabilities, accuracy, statistics_uri)

builds it (build_reference), finds the train statistics (train_statistics_file) and
writes both (write_monitoring).

The Evaluator writes it into its blessing's MONITORING_DIR, from the predictions
its audit already made on the eval split; the Pusher copies that folder into
the pushed version's assets.extra/, so the reference travels with the model.
"""
import json
import os
from typing import List, Optional

import numpy as np

from core.contract import (MONITOR_REFERENCE_FILE, MONITORING_DIR, TRAIN,
                           TRAIN_STATISTICS_FILE, split_dir)
from core.storage import files

FORMAT = 1  # reference.json's layout: raised when a field changes meaning, so readers can tell
# StatisticsGen's file in each split folder (tfx.components.statistics_gen.executor's
# DEFAULT_FILE_NAME, named here so this module imports neither TFX nor TFDV).
STATISTICS_FILE = "FeatureStats.pb"
# Four decimals tell apart confidences a distribution comparison can tell apart, and keep
# the file a few bytes per image.
CONFIDENCE_DECIMALS = 4


def build_reference(names: List[str], labels: np.ndarray, probabilities: np.ndarray,
                    accuracy: Optional[float]) -> dict:
    """reference.json's content, without the train statistics' entry.

    `labels` ([N] true class ids) and `probabilities` ([N, classes]) are the audit's,
    on the eval examples it read (all of them, up to its MAX_EXAMPLES spread evenly;
    never none: the audit refuses an empty split).
    `accuracy` is TFMA's overall accuracy, the one the blessing carries; None (TFMA wrote
    none) falls back to these predictions' own.
    """
    probabilities = np.asarray(probabilities)
    labels = np.asarray(labels, np.int64)
    predicted = probabilities.argmax(axis=1)
    if accuracy is None:
        accuracy = float(np.mean(predicted == labels))
    return {"format": FORMAT, "labels": list(names),
            "eval": {"count": int(len(labels)), "accuracy": accuracy,
                     "predicted": [int(p) for p in predicted],
                     "confidence": [round(float(c), CONFIDENCE_DECIMALS)
                                    for c in probabilities.max(axis=1)],
                     "label": [int(label) for label in labels]}}


def train_statistics_file(statistics_uri: Optional[str]) -> Optional[str]:
    """The train split's FeatureStats.pb in StatisticsGen's output, or None: no statistics
    input (a pipeline wired before it existed) or no train split in it."""
    if not statistics_uri:
        return None
    path = os.path.join(split_dir(statistics_uri, TRAIN), STATISTICS_FILE)
    return path if files.exists(path) else None


def write_monitoring(folder: str, reference: dict, train_statistics: Optional[str]) -> str:
    """Writes `folder`/MONITORING_DIR/: the train statistics, copied byte for byte, then
    reference.json naming them ("train_statistics": null without); returns that folder.

    The statistics go first: a reader that finds reference.json finds what it names.
    """
    monitoring = os.path.join(folder, MONITORING_DIR)
    files.makedirs(monitoring)
    if train_statistics:
        files.copy(train_statistics, os.path.join(monitoring, TRAIN_STATISTICS_FILE))
    content = {**reference, "train_statistics": TRAIN_STATISTICS_FILE if train_statistics
               else None}
    # One line: a few numbers per eval image, which an indented file would put one a line.
    files.write_text(os.path.join(monitoring, MONITOR_REFERENCE_FILE),
                     json.dumps(content) + "\n")
    return monitoring


def write_reference(folder: str, names: List[str], labels: np.ndarray,
                    probabilities: np.ndarray, accuracy: Optional[float],
                    statistics_uri: Optional[str]) -> str:
    """`folder`/MONITORING_DIR/ from the audit's predictions and StatisticsGen's output.

    Without statistics (a pipeline compiled before the Evaluator took them) the
    reference is written all the same, saying it has none: the monitor can still
    compare predictions, and a model must not fail its evaluation over it.
    """
    return write_monitoring(folder, build_reference(names, labels, probabilities, accuracy),
                            train_statistics_file(statistics_uri))
