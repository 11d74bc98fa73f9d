"""The model card of a blessed model, in the Model Card Toolkit's schema v0.0.2.

Plain functions on CardSources (sources.py), no TensorFlow. The format itself
(the schema, the stamp the Pusher adds, the pages) is in
components/model_card/format/, which the Pusher reads too.
"""
import json
from typing import List, Optional

from components.drift_validator.verdict import describe
from core.intervals import wilson_of
from components.model_card.format.card_format import SCHEMA_VERSION
from components.model_card.sources import CardSources

NOT_MEASURED = "not measured"
MAX_LISTED_LABELS = 100  # output_format_map lists at most this many classes


def build_card(sources: CardSources, tflite: Optional[dict] = None) -> dict:
    """The card of a blessed model, before it is pushed: `stamp_card` adds the version.

    `tflite`: {"quantize", "parity", "metadata", "pushed", "reason"} of its TFLite
    conversion, or None. Parts whose source is absent say "not measured".
    """
    return {"schema_version": SCHEMA_VERSION,
            "model_details": _model_details(sources),
            "model_parameters": _model_parameters(sources),
            "quantitative_analysis": {"performance_metrics": metrics(sources)},
            "considerations": _considerations(sources, tflite)}


def _shape_words(sources: CardSources) -> str:
    if not sources.input_shape:
        return "images"
    size, _, channels = sources.input_shape
    color = {1: "grayscale", 3: "RGB"}.get(channels, f"{channels}-channel")
    return f"{color} images resized to {size}x{size}"


def _labels_preview(labels: List[str], count: int = 10) -> str:
    shown = ", ".join(labels[:count])
    return shown + (f" and {len(labels) - count} more" if len(labels) > count else "")


def _model_details(sources: CardSources) -> dict:
    spans = sources.record.get("spans") or []
    trained_on = (f"spans {', '.join(map(str, spans))}" if spans
                  else "one dataset (no spans)")
    accuracy = sources.record.get("accuracy")
    documentation = (
        f"From {sources.source_uri}. Trained on {trained_on}; "
        f"architecture {sources.architecture or NOT_MEASURED}. The Evaluator's accuracy on "
        f"the eval split: {_number(accuracy)}. Made by imagepipe's ModelCardGenerator from "
        "the Evaluator's audit and the ingest report; docs/model_card.md says where each "
        "part comes from.")
    return {"name": sources.name,
            "overview": f"Classifies {_shape_words(sources)} into {len(sources.labels)} "
                        f"classes: {_labels_preview(sources.labels)}.",
            "documentation": documentation}


def _number(value, signed: bool = False) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{float(value):+.4f}" if signed else f"{float(value):.4f}"


def _model_parameters(sources: CardSources) -> dict:
    shape = sources.input_shape
    training = sources.training or {}
    facts = {"image_size": f"{shape[0]}x{shape[1]}" if shape else NOT_MEASURED,
             "channels": str(shape[2]) if shape else NOT_MEASURED,
             "epochs_run": str(training.get("epochs_run", NOT_MEASURED)),
             "epochs_planned": str(training.get("epochs_planned", NOT_MEASURED)),
             "warm_start": json.dumps(training["warm_start"]) if training.get("warm_start")
             else NOT_MEASURED}
    listed = sources.labels[:MAX_LISTED_LABELS]
    outputs = [{"key": str(i), "value": label} for i, label in enumerate(listed)]
    if len(sources.labels) > len(listed):
        outputs.append({"key": "...", "value": f"{len(sources.labels) - len(listed)} more "
                                               "in labels.txt"})
    pixels = f"[batch, {shape[0]}, {shape[1]}, {shape[2]}]" if shape else "[batch, size, size, c]"
    return {"model_architecture": sources.architecture or NOT_MEASURED,
            "data": datasets(sources.report),
            "input_format": f"serving_tensor: float32 pixels {pixels} in [0, 255], decoded "
                            "and resized with antialiasing; serving_image: encoded image "
                            "bytes; serving_default: serialized tf.Example",
            "input_format_map": [{"key": k, "value": v} for k, v in facts.items()],
            "output_format": f"probabilities: float32 [batch, {len(sources.labels)}], "
                             "in labels.txt order",
            "output_format_map": outputs}


def datasets(report: dict) -> List[dict]:
    """The train and eval splits (sizes, class counts) and the data health, as datasets."""
    per_class = report.get("per_class") or {}
    splits = report.get("splits") or {}
    found = [{"name": f"{split} split",
              "description": f"{count} images; per class: "
                             f"{_counts(per_class.get(split)) or NOT_MEASURED}"}
             for split, count in splits.items()]
    return found + [{"name": "data health (every ingested image)",
                     "description": _health_words(report.get("data_health"))}]


def _counts(counts: Optional[dict]) -> str:
    return ", ".join(f"{name} {count}" for name, count in (counts or {}).items())


def _health_words(health: Optional[dict]) -> str:
    if not health:
        return f"data health {NOT_MEASURED}"
    counts, imbalance = health.get("counts") or {}, health.get("imbalance") or {}
    return (f"{health.get('images', NOT_MEASURED)} images; "
            f"{counts.get('duplicate_images', 0)} duplicate images in "
            f"{counts.get('exact_groups', 0)} exact and {counts.get('near_groups', 0)} near "
            f"groups; {counts.get('conflict_groups', 0)} groups with conflicting labels; "
            f"{counts.get('leaked', 0)} eval images leaked from train; "
            f"{counts.get('dropped', 0)} dropped; class imbalance ratio "
            f"{imbalance.get('ratio', NOT_MEASURED)}, tiny classes: "
            f"{', '.join(imbalance.get('tiny_classes') or []) or 'none'}; class counts: "
            f"{_counts(health.get('class_counts')) or NOT_MEASURED}")


def metrics(sources: CardSources) -> List[dict]:
    """Accuracy overall, per class, per slice, under corruptions and FGSM, without leaked
    images, and its change from the baseline; each accuracy counted on eval images carries
    its 95% Wilson interval in the schema's `confidence_interval`."""
    audit = sources.audit
    if not audit:
        accuracy = sources.record.get("accuracy")
        return [{"type": "accuracy", "value": _number(accuracy),
                 "slice": "overall (eval split; the Evaluator's figure, no audit)"},
                {"type": "audit", "value": NOT_MEASURED,
                 "slice": "slices, robustness, FGSM, leakage"}]
    found = [_metric("accuracy", audit.get("accuracy"),
                     f"overall ({audit.get('examples', '?')} eval examples)",
                     _interval(audit.get("accuracy"), audit.get("examples"),
                               audit.get("accuracy_interval")))]
    return found + _class_metrics(audit.get("per_class")) + \
        _slice_metrics(audit.get("slices")) + _robustness_metrics(audit.get("robustness")) + \
        _leakage_metrics(audit.get("leakage"), audit.get("examples")) + \
        _baseline_metrics(audit.get("baseline"))


def _interval(value, examples, interval=None) -> Optional[list]:
    """A figure's 95% interval: the one recorded, else Wilson's from its count; None
    without a count (an older audit's figure, a mean over corruptions)."""
    if interval:
        return interval
    if value is None or not isinstance(examples, int) or examples <= 0:
        return None
    return list(wilson_of(value, examples))


def _metric(kind: str, value, slice_name: str, interval: Optional[list] = None,
            signed: bool = False) -> dict:
    found = {"type": kind, "value": _number(value, signed), "slice": slice_name}
    if interval:
        found["confidence_interval"] = {"lower_bound": _number(interval[0], signed),
                                        "upper_bound": _number(interval[1], signed)}
    return found


def _class_metrics(per_class: Optional[dict]) -> List[dict]:
    """Each class's accuracy on the audited eval images (audits before per-class: none)."""
    return [_metric("accuracy", cell.get("accuracy"),
                    f"class {name} ({cell.get('examples', '?')} examples)",
                    _interval(cell.get("accuracy"), cell.get("examples"), cell.get("interval")))
            for name, cell in (per_class or {}).items()]


def _baseline_metrics(baseline: Optional[dict]) -> List[dict]:
    """The change from the last blessed model, paired on the same images, when the audit
    scored both."""
    if not baseline or not baseline.get("examples"):
        return []
    return [_metric("accuracy change from the last blessed model (this model minus it)",
                    baseline["difference"], f"paired on the same {baseline['examples']} eval "
                    "examples", baseline.get("interval"), signed=True)]


def _slice_metrics(slices: Optional[dict]) -> List[dict]:
    if not slices:
        return [{"type": "accuracy by slice", "value": NOT_MEASURED, "slice": "slices"}]
    found = [_metric("accuracy", cell.get("accuracy"),
                     f"{feature}={value} ({cell.get('examples', '?')} examples)",
                     _interval(cell.get("accuracy"), cell.get("examples"), cell.get("interval")))
             for feature, values in (slices.get("by_feature") or {}).items()
             for value, cell in values.items()]
    found.append(_metric("accuracy gap, worst slice to overall", slices.get("gap"), "slices"))
    if slices.get("judged_gap") is not None:
        found.append(_metric("accuracy gap beyond chance, overall minus the lowest 95% upper "
                             "bound of a slice", slices["judged_gap"], "slices"))
    return found


def _robustness_metrics(robustness: Optional[dict]) -> List[dict]:
    if not robustness:
        return [{"type": "accuracy under corruption", "value": NOT_MEASURED,
                 "slice": "robustness"}]
    found = [_metric(f"accuracy under {name}", accuracy, f"severity {severity}")
             for name, levels in (robustness.get("corruptions") or {}).items()
             for severity, accuracy in levels.items()]
    found.append(_metric("accuracy under corruption, mean", robustness.get("mean"),
                         f"{robustness.get('examples', '?')} examples"))
    fgsm = robustness.get("fgsm") or {}
    return found + [_metric("accuracy under FGSM", fgsm.get("accuracy"),
                            f"epsilon {fgsm.get('epsilon', '?')}")]


def _leakage_metrics(leakage: Optional[dict], examples: Optional[int]) -> List[dict]:
    leakage = leakage or {}
    left = leakage.get("examples_without")
    if left is None and isinstance(examples, int):
        left = examples - leakage.get("leaked", 0)
    return [_metric("accuracy without leaked eval images", leakage.get("accuracy_without"),
                    f"{leakage.get('leaked', 0)} leaked images left out",
                    _interval(leakage.get("accuracy_without"), left, leakage.get("interval"))),
            _metric("accuracy gain from leaked eval images", leakage.get("gain"), "leakage")]


def _considerations(sources: CardSources, tflite: Optional[dict]) -> dict:
    count = len(sources.labels)
    return {"users": [{"description": "Developers serving it (TF Serving, `imagepipe "
                                      "predict`) or shipping its TFLite file in an app."}],
            "use_cases": [{"description": f"Classifying {_shape_words(sources)} into its "
                                          f"{count} classes ({_labels_preview(sources.labels)})"
                                          ", for images like those it was trained on."}],
            "limitations": [{"description": text} for text in limitations(sources)],
            "tradeoffs": [{"description": text} for text in _tradeoffs(tflite)],
            "ethical_considerations": risks(sources)}


def limitations(sources: CardSources) -> List[str]:
    """Out of scope, input, label-error suspects, the worst slice and corruption."""
    audit = sources.audit or {}
    suspects = audit.get("suspects")
    found = [f"Out of scope: images unlike the training data (other sources, cameras, "
             f"lighting or subjects); it always answers one of its {len(sources.labels)} "
             "classes, even for an image of none of them.",
             f"Input: {_shape_words(sources)}; details finer than that size are lost.",
             (f"{suspects.get('flagged', 0)} images flagged as possible label errors "
              f"({suspects.get('method', '?')})." if suspects
              else f"Label-error suspects: {NOT_MEASURED}.")]
    worst = (audit.get("slices") or {}).get("worst")
    if worst:
        interval = _interval(worst.get("accuracy"), worst.get("examples"), worst.get("interval"))
        found.append(f"Worst slice: {worst.get('feature')}={worst.get('value')}, accuracy "
                     f"{_number(worst.get('accuracy'))} on {worst.get('examples')} examples"
                     + (f" (95% CI {_number(interval[0])}-{_number(interval[1])})"
                        if interval else "") + ".")
    corruptions = (audit.get("robustness") or {}).get("corruptions") or {}
    cells = [(acc, name, level) for name, levels in corruptions.items()
             for level, acc in levels.items() if acc is not None]
    if cells:
        acc, name, level = min(cells)
        found.append(f"Least robust to {name} (severity {level}): accuracy {_number(acc)}.")
    return found


def _tradeoffs(tflite: Optional[dict]) -> List[str]:
    if not tflite:
        return ["No TFLite file was converted with this version."]
    if not tflite.get("pushed"):
        return [f"No TFLite file was pushed with this version: {tflite.get('reason')}."]
    parity, metadata = tflite.get("parity") or {}, tflite.get("metadata") or {}
    labels = ("labels and normalization are embedded in model.tflite"
              if metadata.get("embedded") else
              f"metadata not embedded ({metadata.get('reason', NOT_MEASURED)})")
    return [f"TFLite ({tflite.get('quantize')}): eval accuracy "
            f"{_number(parity.get('tflite_accuracy'))} against the SavedModel's "
            f"{_number(parity.get('saved_model_accuracy'))}; {labels}."]


def risks(sources: CardSources) -> List[dict]:
    """Drift of the newest span and leaked eval images, with what to do about them."""
    drift = sources.report.get("drift") or {}
    found = [{"name": f"Data drift: {_drift_words(drift)}",
              "mitigation_strategy": sources.record.get("drift_overridden")
              or "A drifted span blocks the push unless --allow-drift."}]
    leaked = ((sources.report.get("data_health") or {}).get("counts") or {}).get("leaked")
    if leaked:
        found.append({"name": f"{leaked} eval images are near copies of train images: the "
                              "eval accuracy may be too high.",
                      "mitigation_strategy": "Ingest with --dedupe; the audit's leakage "
                                             "gain measures the effect."})
    return found


def _drift_words(drift: dict) -> str:
    """The drift verdict's line for a compared span (components/drift_validator/verdict.py),
    else the verdict ("not compared")."""
    try:
        return " ".join(describe(drift).split())
    except (KeyError, TypeError):  # no comparison: a first span, no spans, an older report
        return drift.get("verdict") or NOT_MEASURED
