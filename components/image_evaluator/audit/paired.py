"""The candidate against the baseline on the same audited eval images: a paired comparison.

TFMA scores both models on the eval split but keeps only their totals; whether
the two models got the *same* images right is what makes the difference of
their accuracies precise (core/intervals.py paired_difference),
so the audit predicts the baseline once on the images it already predicted
the candidate on: one more forward pass, only when there is a baseline.
"""
import logging
from typing import List, Optional

import numpy as np

from core.intervals import CONFIDENCE, paired_difference
from components.image_evaluator.audit.classifier import load_classifier, predict_encoded

METHOD = "Newcombe hybrid score interval for paired proportions (Newcombe 1998, method 10)"


def compare(candidate_right: np.ndarray, baseline_right: np.ndarray) -> dict:
    """audit.json's "baseline": the 2x2 table of right answers on the same images, both
    accuracies, their difference (candidate - baseline) and its paired interval."""
    candidate, baseline = np.asarray(candidate_right, bool), np.asarray(baseline_right, bool)
    if candidate.shape != baseline.shape or not candidate.size:
        raise ValueError(f"a paired comparison needs the same images scored by both models, "
                         f"got {candidate.size} and {baseline.size} answers")
    both, candidate_only = int(np.sum(candidate & baseline)), int(np.sum(candidate & ~baseline))
    baseline_only = int(np.sum(~candidate & baseline))
    neither = int(candidate.size) - both - candidate_only - baseline_only
    return {"examples": int(candidate.size),
            "candidate_accuracy": float(np.mean(candidate)),
            "baseline_accuracy": float(np.mean(baseline)),
            "difference": (candidate_only - baseline_only) / candidate.size,
            "interval": list(paired_difference(both, candidate_only, baseline_only, neither)),
            "confidence": CONFIDENCE, "method": METHOD, "both": both,
            "candidate_only": candidate_only, "baseline_only": baseline_only,
            "neither": neither}


def baseline_comparison(baseline_uri: Optional[str], encoded: List[bytes], labels: np.ndarray,
                        candidate_right: np.ndarray) -> Optional[dict]:
    """`compare` with the baseline's answers on the same encoded images; None without a
    baseline; {"examples": None, "reason"} when the baseline cannot be scored.

    The figure only informs (the blessing's change gate uses TFMA's totals), so a
    baseline the audit cannot load, such as one exported before the `serving_tensor`
    signature or with other classes, is recorded with its reason rather than failing
    the Evaluator.
    """
    if not baseline_uri:
        return None
    try:
        probabilities = predict_encoded(load_classifier(baseline_uri), encoded)
    except Exception as e:  # noqa: BLE001  (a report-only figure never stops the Evaluator)
        logging.warning("audit: the baseline %s could not be scored: %s", baseline_uri, e)
        return {"examples": None, "reason": f"the baseline could not be scored "
                                            f"({type(e).__name__}: {e})"}
    if probabilities.shape[1] <= int(np.max(labels)):
        return {"examples": None, "reason": f"the baseline answers {probabilities.shape[1]} "
                                            "classes, fewer than the eval labels need"}
    return compare(candidate_right, probabilities.argmax(axis=1) == labels)
