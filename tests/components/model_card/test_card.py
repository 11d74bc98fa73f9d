"""The model card: fits the vendored Model Card Toolkit schema, with or without its sources."""
import dataclasses
import json

import jsonschema
import pytest

from core.intervals import paired_difference, wilson
from components.model_card.format.card_format import stamp_card, validate
from components.model_card.card import NOT_MEASURED, build_card
from components.model_card.format.pages import card_files, render_html
from components.model_card.sources import CardSources, read_card_sources

AUDIT = {
    "examples": 40, "accuracy": 0.925, "seconds": 3.5,
    "leakage": {"leaked": 2, "accuracy_without": 0.9211, "gain": 0.0039},
    "suspects": {"method": "confident learning", "flagged": 3, "top": []},
    "saliency": {"method": "grad-cam", "layer": None, "images": []},
    "robustness": {"examples": 40, "clean": 0.925, "mean": 0.81,
                   "corruptions": {"gaussian_noise": {"1": 0.9, "2": 0.8, "3": 0.6125},
                                   "brightness": {"1": 0.92, "2": 0.9, "3": 0.85}},
                   "fgsm": {"epsilon": 0.01, "accuracy": 0.4321}},
    "slices": {"overall": 0.925, "min_examples": 5, "gap": 0.175,
               "worst": {"feature": "image/slice/size", "value": "small", "accuracy": 0.75,
                         "examples": 8},
               "by_feature": {"image/slice/size": {"small": {"accuracy": 0.75, "examples": 8},
                                                   "large": {"accuracy": 0.9688,
                                                             "examples": 32}}}},
    "gates": {}, "blocked": []}
HEALTH = {"images": 60, "duplicates": [], "label_conflicts": [],
          "leakage": {"count": 2, "share": 0.05, "pairs": []},
          "class_counts": {"cat": 35, "dog": 25},
          "imbalance": {"ratio": 1.4, "tiny_classes": [], "remedy": "none"}, "dropped": [],
          "counts": {"exact_groups": 1, "near_groups": 2, "duplicate_images": 3,
                     "conflict_groups": 1, "leaked": 2, "dropped": 0},
          "truncated": False}
REPORT = {"splits": {"train": 40, "eval": 20},
          "per_class": {"train": {"cat": 22, "dog": 18}, "eval": {"cat": 13, "dog": 7}},
          "data_health": HEALTH,
          "drift": {"verdict": "ok", "span": 3, "previous_span": 2, "drifted": [],
                    "features": {name: {"value": 0.01, "threshold": 0.2, "drifted": False,
                                        "detail": "same"}
                                 for name in ("label", "brightness", "size", "grayscale")}}}
FULL = CardSources(name="pets", source_uri="/runs/Trainer/model/7", labels=["cat", "dog"],
                   input_shape=[64, 64, 3], architecture="mnist_cnn",
                   training={"epochs_run": 12, "epochs_planned": 15},
                   record={"spans": [2, 3], "accuracy": 0.925}, audit=AUDIT, report=REPORT)
BARE = CardSources(name="pets", source_uri="/runs/Trainer/model/7", labels=["cat", "dog"],
                   input_shape=None, architecture=None, training=None,
                   record={"spans": [], "accuracy": None}, audit=None, report={})
TFLITE = {"quantize": "int8", "pushed": True, "reason": "passed the parity gate",
          "parity": {"saved_model_accuracy": 0.925, "tflite_accuracy": 0.9},
          "metadata": {"embedded": True}}


def _metric(card, kind, slice_part=""):
    return [m["value"] for m in card["quantitative_analysis"]["performance_metrics"]
            if m["type"] == kind and slice_part in m.get("slice", "")]


def _pushed(sources, version, path, tflite=None):
    """The card as the Pusher ships it: built before the push, stamped at it."""
    return stamp_card(build_card(sources, tflite), version, 1795600000.0, path)


def test_a_draft_card_fits_the_schema_and_the_stamp_adds_the_version():
    draft = build_card(FULL, TFLITE)
    validate(draft)
    assert "version" not in draft["model_details"]
    stamped = stamp_card(draft, 4, 1795600000.0, "/serving/pets/4")
    assert stamped["model_details"]["path"] == "/serving/pets/4"
    assert stamped["model_details"]["documentation"].startswith("Version 4 of pets, pushed at ")


def test_a_card_with_the_audit_and_data_health_fits_the_schema_and_carries_the_figures():
    card = _pushed(FULL, 4, "/serving/pets/4", TFLITE)
    validate(card)
    assert card["model_details"]["version"] == {"name": "4", "date": "2026-11-25"}
    assert _metric(card, "accuracy", "overall") == ["0.9250"]
    assert _metric(card, "accuracy", "image/slice/size=small") == ["0.7500"]
    assert _metric(card, "accuracy under gaussian_noise", "severity 3") == ["0.6125"]
    assert _metric(card, "accuracy under FGSM") == ["0.4321"]
    assert _metric(card, "accuracy gain from leaked eval images") == ["0.0039"]
    parameters = card["model_parameters"]
    assert parameters["model_architecture"] == "mnist_cnn"
    assert {"key": "epochs_run", "value": "12"} in parameters["input_format_map"]
    assert parameters["output_format_map"] == [{"key": "0", "value": "cat"},
                                               {"key": "1", "value": "dog"}]
    data = {d["name"]: d["description"] for d in parameters["data"]}
    assert data["train split"] == "40 images; per class: cat 22, dog 18"
    assert "3 duplicate images" in data["data health (every ingested image)"]
    limits = " ".join(c["description"] for c in card["considerations"]["limitations"])
    assert "3 images flagged as possible label errors" in limits
    assert "Least robust to gaussian_noise (severity 3)" in limits
    risks = [r["name"] for r in card["considerations"]["ethical_considerations"]]
    assert risks[0].startswith("Data drift: no drift") and "2 eval images" in risks[1]


def _interval(card, kind, slice_part=""):
    return [m.get("confidence_interval") for m in
            card["quantitative_analysis"]["performance_metrics"]
            if m["type"] == kind and slice_part in m.get("slice", "")]


def _bounds(low, high):
    return {"lower_bound": f"{low:.4f}", "upper_bound": f"{high:.4f}"}


def test_each_counted_accuracy_carries_its_95_percent_interval_in_the_schemas_field():
    # An audit from before the intervals: Wilson's, from each figure's count.
    card = _pushed(FULL, 4, "/serving/pets/4", TFLITE)
    validate(card)
    assert _interval(card, "accuracy", "overall") == [_bounds(*wilson(37, 40))]
    assert _interval(card, "accuracy", "image/slice/size=small") == [_bounds(*wilson(6, 8))]
    assert _interval(card, "accuracy without leaked eval images") == [_bounds(*wilson(35, 38))]
    assert _interval(card, "accuracy under FGSM") == [None]  # not counted: no interval
    assert "Worst slice: image/slice/size=small, accuracy 0.7500 on 8 examples (95% CI " \
           f"{wilson(6, 8)[0]:.4f}-{wilson(6, 8)[1]:.4f})." in " ".join(
               c["description"] for c in card["considerations"]["limitations"])
    # The audit's per-class figures and the paired change from the baseline.
    audit = {**AUDIT, "per_class": {"cat": {"accuracy": 0.95, "examples": 20,
                                            "interval": list(wilson(19, 20))}},
             "baseline": {"examples": 40, "difference": -0.025,
                          "interval": list(paired_difference(35, 2, 3, 0))},
             "slices": {**AUDIT["slices"], "judged_gap": 0.012}}
    card = _pushed(dataclasses.replace(FULL, audit=audit), 4, "/serving/pets/4")
    validate(card)
    assert _metric(card, "accuracy", "class cat (20 examples)") == ["0.9500"]
    assert _interval(card, "accuracy", "class cat") == [_bounds(*wilson(19, 20))]
    change = "accuracy change from the last blessed model (this model minus it)"
    low, high = paired_difference(35, 2, 3, 0)
    assert _metric(card, change, "paired on the same 40") == ["-0.0250"]
    assert _interval(card, change) == [{"lower_bound": f"{low:+.4f}",
                                        "upper_bound": f"{high:+.4f}"}]
    assert _metric(card, "accuracy gap beyond chance, overall minus the lowest 95% upper "
                         "bound of a slice") == ["0.0120"]
    html = render_html(card)
    assert f"{wilson(19, 20)[0]:.4f} – {wilson(19, 20)[1]:.4f}" in html


def test_a_card_without_audit_or_ingest_report_says_not_measured_and_still_fits():
    card = _pushed(BARE, 1, "/serving/pets/1")
    validate(card)
    assert _metric(card, "accuracy") == [NOT_MEASURED]
    assert _metric(card, "audit") == [NOT_MEASURED]
    assert card["model_parameters"]["model_architecture"] == NOT_MEASURED
    assert card["model_parameters"]["data"][-1]["description"] == "data health not measured"
    assert "Label-error suspects: not measured." in [
        c["description"] for c in card["considerations"]["limitations"]]


def test_the_schema_is_enforced():
    card = _pushed(BARE, 1, "/serving/pets/1")
    with pytest.raises(jsonschema.ValidationError):
        validate({**card, "pushed_at": 1})  # the schema allows no other top-level key
    with pytest.raises(jsonschema.ValidationError):
        validate({**card, "model_details": {**card["model_details"],
                                            "version": {"date": "25/11/2026"}}})


def test_the_html_shows_the_key_figures_and_escapes_labels():
    sources = dataclasses.replace(FULL, labels=["cat", "<b>dog</b>"])
    html = render_html(_pushed(sources, 4, "/serving/pets/4", TFLITE))
    for text in ("Model Card for pets", "0.9250", "0.4321", "image/slice/size=small",
                 "mnist_cnn", "labels and normalization are embedded", "&lt;b&gt;dog&lt;/b&gt;"):
        assert text in html, text
    assert "<b>dog</b>" not in html
    files = card_files(_pushed(BARE, 1, "/serving/pets/1"))
    assert json.loads(files["model_card.json"])["schema_version"] == "0.0.2"
    assert b"not measured" in files["model_card.html"]


def test_sources_are_read_where_the_pipeline_writes_them_and_missing_ones_are_none(tmp_path):
    model_uri = tmp_path / "Trainer" / "model" / "7"
    extra = model_uri / "Format-Serving" / "assets.extra"
    extra.mkdir(parents=True)
    (extra / "labels.txt").write_text("cat\ndog\n")
    run = tmp_path / "Trainer" / "model_run" / "7"
    run.mkdir(parents=True)
    (run / "fit_stats.json").write_text(json.dumps({"epochs_run": 12, "epochs_planned": 15}))
    blessing = tmp_path / "blessing"
    blessing.mkdir()
    (blessing / "audit.json").write_text(json.dumps(AUDIT))
    sources = read_card_sources("pets", str(model_uri / "Format-Serving"), str(model_uri),
                                str(blessing), REPORT, {"spans": [3]})
    assert sources.labels == ["cat", "dog"] and sources.training["epochs_run"] == 12
    assert sources.audit == AUDIT and sources.report == REPORT
    assert sources.input_shape is None and sources.architecture is None  # no SavedModel here
    validate(_pushed(sources, 2, "/serving/pets/2"))
    bare = read_card_sources("pets", str(tmp_path / "none"), str(tmp_path / "none"), None, {}, {})
    assert (bare.labels, bare.training, bare.audit) == ([], None, None)
