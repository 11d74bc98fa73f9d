"""Suspected label errors: cleanlab's confident learning on the eval split's probabilities.

Confident learning (Northcutt, Jiang & Chuang, JAIR 2021) asks for out-of-sample
probabilities; the eval split's are that, whereas the train split's would need
cross-validated training, one model a fold, which the audit cannot afford: only eval
images are audited. cleanlab's `find_label_issues` with filter_by="confident_learning"
flags the off-diagonal of the confident joint (an image confidently of another class than
its given one) unless the model's top class is the given label, and ranks by
self-confidence, the probability of the given label, lowest first.
"""
import dataclasses
from typing import List

import numpy as np
from cleanlab.filter import find_label_issues

METHOD = "confident learning (cleanlab, Northcutt et al. 2021), ranked by self-confidence"
TOP = 12  # suspects shown (thumbnails in audit/)


@dataclasses.dataclass
class Suspects:
    """Flagged examples, ranked: most suspicious first."""

    order: List[int]  # example indices, ranked
    predicted: List[int]  # the model's top class of each, in `order`
    scores: List[float]  # self-confidence of each, in `order`


def find_suspects(probabilities: np.ndarray, labels: np.ndarray) -> Suspects:
    """Confident learning's label issues, lowest self-confidence first.

    Args:
        probabilities: [N, classes] predicted probabilities, rows summing to 1.
        labels: [N] given class ids.

    Returns:
        The flagged examples; none for an empty split (cleanlab refuses one).
    """
    labels = np.asarray(labels, np.int64)
    if not len(labels):
        return Suspects([], [], [])
    ranked = find_label_issues(labels, probabilities, filter_by="confident_learning",
                               return_indices_ranked_by="self_confidence")
    order = [int(i) for i in ranked]
    return Suspects(order, [int(probabilities[i].argmax()) for i in order],
                    [float(probabilities[i, labels[i]]) for i in order])
