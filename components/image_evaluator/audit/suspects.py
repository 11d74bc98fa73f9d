"""Suspected label errors by confident learning (Northcutt, Jiang & Chuang, JAIR 2021).

Plain numpy, on the eval split's predicted probabilities. The paper (and
cleanlab) asks for out-of-sample probabilities; the eval split's are that,
whereas the train split's would need cross-validated training, one model a
fold, which the audit cannot afford: only eval images are audited.

What it matches: cleanlab 2.x's `find_label_issues(labels, pred_probs,
filter_by="confident_learning", rank_by="self_confidence")`:
- a threshold per class j, t_j: the mean probability of j over the examples
  labelled j (`get_confident_thresholds`);
- an example's confident label: of the classes k with p_k >= t_k, the most
  probable one; examples with none are not counted (`compute_confident_joint`);
- flagged: confident label != given label (the confident joint's
  off-diagonal), unless the model's argmax is the given label (cleanlab
  drops those too);
- ranked by self-confidence, p of the given label, lowest first.
What it does not: cleanlab's calibration of the joint to the label counts
(it changes the joint's counts, not which examples are flagged) and its
multi-label and multiprocessing paths.
"""
import dataclasses
from typing import List

import numpy as np

METHOD = "confident learning (Northcutt et al. 2021), ranked by self-confidence"
TOP = 12  # suspects shown (thumbnails in audit/)
# cleanlab compares p_k >= t_k - 1e-6, so a class's own mean counts as confident.
_TOLERANCE = 1e-6


@dataclasses.dataclass
class Suspects:
    """Flagged examples, ranked: most suspicious first."""

    order: List[int]  # example indices, ranked
    predicted: List[int]  # the confident label of each, in `order`
    scores: List[float]  # self-confidence of each, in `order`


def confident_thresholds(probabilities: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """t_j = mean p_j over the examples labelled j; +inf for a class no example has."""
    classes = probabilities.shape[1]
    thresholds = np.full(classes, np.inf)
    for j in np.unique(labels):
        thresholds[j] = probabilities[labels == j, j].mean()
    return thresholds


def confident_labels(probabilities: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Each example's most probable class among those at or above their threshold; -1: none."""
    confident = probabilities >= thresholds - _TOLERANCE
    masked = np.where(confident, probabilities, -1.0)
    return np.where(confident.any(axis=1), masked.argmax(axis=1), -1)


def find_suspects(probabilities: np.ndarray, labels: np.ndarray) -> Suspects:
    """Confident learning's label issues, lowest self-confidence first."""
    labels = np.asarray(labels, np.int64)
    guessed = confident_labels(probabilities, confident_thresholds(probabilities, labels))
    flagged = (guessed >= 0) & (guessed != labels) & (probabilities.argmax(axis=1) != labels)
    self_confidence = probabilities[np.arange(len(labels)), labels]
    order = [int(i) for i in np.flatnonzero(flagged)[
        np.argsort(self_confidence[flagged], kind="stable")]]
    return Suspects(order, [int(guessed[i]) for i in order],
                    [float(self_confidence[i]) for i in order])
