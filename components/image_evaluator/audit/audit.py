"""The audit, end to end: the candidate model on the eval split -> audit.json and pictures.

    audit = run_audit(model_uri, examples_uri, settings, overall, by_feature)
    write_audit(audit, evaluation_uri)

The Evaluator's executor calls both, after TFMA, and writes the same files
into the blessing's folder, where the Pusher reads them for the model card. The
audit's predictions on the eval split come back too (PREDICTIONS), for the
monitoring reference, so that nothing predicts the split a second time. Given the
baseline model (`baseline_uri`), the audit predicts it on the same images for a paired
comparison (paired.py). Its accuracies carry their count and 95% Wilson interval.
"""
import dataclasses
import json
import os
import time
from typing import Dict, List, Optional

import numpy as np

from core.contract import AUDIT_DIR, AUDIT_FILE, ingest_report
from core.intervals import wilson, wilson_of
from components.image_evaluator.settings import AuditSettings
from components.image_evaluator.audit import render
from components.image_evaluator.audit.classifier import (Classifier, decode, load_classifier,
                                                         predict_encoded)
from components.image_evaluator.audit.examples import EvalExamples, class_names, read_eval_examples
from components.image_evaluator.audit.gates import apply_gates, judged_on
from components.image_evaluator.audit.leak_free import leaked_paths, leakage
from components.image_evaluator.audit.paired import baseline_comparison
from components.image_evaluator.audit.robustness import accuracy, examples_for, robustness
from components.image_evaluator.audit.saliency import choose_images, saliency_maps
from components.image_evaluator.audit.slice_gap import ByFeature, slice_gap
from components.image_evaluator.audit.suspects import METHOD, TOP, find_suspects
from core.storage import files

PICTURES = "pictures"  # the audit dict's key for its PNGs, popped by write_audit
PREDICTIONS = "predictions"  # the audit dict's key for its EvalPredictions, left out too
_NOT_WRITTEN = (PICTURES, PREDICTIONS)  # not JSON: PNG files; the monitoring reference


@dataclasses.dataclass(frozen=True)
class EvalPredictions:
    """The candidate's predictions on the audited eval examples, in split order."""

    names: List[str]  # class names in label-id order
    labels: np.ndarray  # [N] true class ids
    probabilities: np.ndarray  # [N, classes]


def _suspects(classifier: Classifier, examples: EvalExamples, probabilities: np.ndarray,
              names: List[str], pictures: Dict[str, np.ndarray]) -> dict:
    found = find_suspects(probabilities, examples.labels)
    top = found.order[:TOP]
    thumbnails = decode(classifier, [examples.encoded[i] for i in top])
    rows = []
    for rank, (index, predicted, score) in enumerate(zip(top, found.predicted, found.scores)):
        relpath = f"{AUDIT_DIR}/suspect_{rank}.png"
        pictures[relpath] = render.thumbnail(thumbnails[rank])
        rows.append({"path": examples.paths[index],
                     "given": names[examples.labels[index]], "predicted": names[predicted],
                     "score": score, "thumbnail": relpath})
    return {"method": METHOD, "flagged": len(found.order), "top": rows}


def _saliency(classifier: Classifier, examples: EvalExamples, predicted: np.ndarray,
              names: List[str], pictures: Dict[str, np.ndarray]) -> dict:
    chosen = choose_images(examples.labels, predicted)
    pixels = decode(classifier, [examples.encoded[i] for i in chosen])
    method, layer, maps = saliency_maps(classifier, pixels, predicted[chosen])
    rows = []
    for rank, index in enumerate(chosen):
        relpath = f"{AUDIT_DIR}/saliency_{rank}.png"
        pictures[relpath] = render.overlay(pixels[rank], maps[rank])
        rows.append({"path": examples.paths[index], "actual": names[examples.labels[index]],
                     "predicted": names[predicted[index]], "overlay": relpath})
    return {"method": method, "layer": layer, "images": rows}


def _robustness(classifier: Classifier, examples: EvalExamples,
                probabilities: np.ndarray) -> dict:
    """On up to examples_for(size) images spread evenly over the audited ones."""
    count = min(examples_for(classifier.size), len(examples.labels))
    chosen = np.unique(np.linspace(0, len(examples.labels) - 1, count).astype(int))
    pixels = decode(classifier, [examples.encoded[i] for i in chosen])
    return robustness(classifier, pixels, examples.labels[chosen], clean=probabilities[chosen])


def _leaked(examples_uri: str) -> Optional[set]:
    report = ingest_report(examples_uri)
    return leaked_paths(report) if report else None


def _counted(right: np.ndarray) -> dict:
    """{"accuracy", "examples", "interval"} of a boolean array of right answers."""
    n, k = int(right.size), int(np.sum(right))
    return {"accuracy": k / n if n else None, "examples": n,
            "interval": list(wilson(k, n)) if n else None}


def _per_class(right: np.ndarray, labels: np.ndarray, names: List[str]) -> Dict[str, dict]:
    """{class name: _counted} for each class with audited images, in label-id order."""
    return {names[label]: _counted(right[labels == label])
            for label in sorted(set(labels.tolist())) if label < len(names)}


def _leakage(examples: EvalExamples, right: np.ndarray, examples_uri: str) -> dict:
    """audit.json's "leakage", with the count and interval of the accuracy without."""
    found = leakage(right, examples.paths, _leaked(examples_uri))
    left = len(examples.labels) - found["leaked"]
    interval = (list(wilson_of(found["accuracy_without"], left))
                if found["accuracy_without"] is not None and left else None)
    return {**found, "examples_without": left, "interval": interval}


def run_audit(model_uri: str, examples_uri: str, settings: AuditSettings,
              overall: Optional[float], by_feature: ByFeature,
              accuracy_threshold: Optional[float] = None,
              baseline_uri: Optional[str] = None) -> dict:
    """audit.json's content, plus its pictures under PICTURES ({relpath: uint8 RGB}) and
    its predictions under PREDICTIONS (EvalPredictions).

    `overall` and `by_feature` are TFMA's accuracies (overall, per slice);
    `accuracy_threshold` the blessing's threshold as typed, which gates.judged_on records;
    `baseline_uri` the baseline Model TFMA compared with (None: none), which "baseline"
    compares with the candidate on the same images (paired.py).
    Raises on an empty eval split: an audit of nothing would pass every gate.
    """
    started = time.perf_counter()
    classifier = load_classifier(model_uri)
    examples = read_eval_examples(examples_uri)
    if not len(examples.labels):
        raise ValueError(f"no eval examples to audit in {examples_uri}")
    probabilities = predict_encoded(classifier, examples.encoded)
    predicted = probabilities.argmax(axis=1)
    names = class_names(examples_uri, model_uri, probabilities.shape[1])
    pictures: Dict[str, np.ndarray] = {}
    right = predicted == examples.labels
    audit = {"examples": len(examples.labels),
             "accuracy": accuracy(probabilities, examples.labels),
             "accuracy_interval": _counted(right)["interval"],
             "per_class": _per_class(right, examples.labels, names),
             "baseline": baseline_comparison(baseline_uri, examples.encoded, examples.labels,
                                             right),
             "leakage": _leakage(examples, right, examples_uri),
             "suspects": _suspects(classifier, examples, probabilities, names, pictures),
             "saliency": _saliency(classifier, examples, predicted, names, pictures),
             "robustness": _robustness(classifier, examples, probabilities),
             "slices": slice_gap(overall, by_feature)}
    audit["gates"], audit["blocked"] = apply_gates(settings, audit, accuracy_threshold)
    audit["judged_on"] = judged_on(audit, overall, accuracy_threshold)
    audit["seconds"] = round(time.perf_counter() - started, 3)
    audit[PICTURES] = pictures
    audit[PREDICTIONS] = EvalPredictions(names, examples.labels, probabilities)
    return audit


def write_audit(audit: dict, folder: str) -> None:
    """`folder`/audit.json and its pictures under `folder`/audit/."""
    for relpath, image in audit.get(PICTURES, {}).items():
        render.write_png(image, os.path.join(folder, relpath))
    content = {key: value for key, value in audit.items() if key not in _NOT_WRITTEN}
    files.write_text(os.path.join(folder, AUDIT_FILE), json.dumps(content, indent=2))
