"""--mlflow-uri: what a run sends to MLflow, and a server that does not answer (exit 2)."""
import socket

import pytest

from settings.config import PipelineConfig
from core.errors import UsageError
from report import tracking

SUMMARY = {
    "eval": {"accuracy": 0.93, "baseline_accuracy": None, "blessed": True,
             "reason": "accuracy >= threshold 0.9", "per_class": {"cat": 0.9, "hot dog!": None}},
    "training": {"examples_per_s": 812.5, "epochs_run": 4},
    "timings_s": {"total": 31.2},
    "spans": {"trained": [1, 2], "evaluated": 2, "ingested": [2], "reused": [1]},
    "warm_start": {"from": "/out/tfx/Trainer/model/7", "reason": "same network"},
    "drift": {"verdict": "ok", "drifted": []},
    "pushed": {"serving": "/out/serving/imagepipe/17", "version": 17, "blocked": None},
}


def test_metrics_leave_out_what_is_missing_and_clean_class_names():
    assert tracking.metrics(SUMMARY) == {"accuracy": 0.93, "examples_per_s": 812.5,
                                         "epochs_run": 4.0, "seconds_total": 31.2,
                                         "accuracy_class_cat": 0.9}


def test_metrics_carry_the_audits_figures_when_measured():
    summary = {**SUMMARY, "eval": {**SUMMARY["eval"], "accuracy_without_leaked": 0.91,
                                   "leakage_gain": 0.02},
               "robustness": {"mean": 0.7, "fgsm": {"epsilon": 2.0, "accuracy": 0.4}},
               "slices": {"gap": 0.05}, "suspects": {"flagged": 3},
               "data_health": {"counts": {"duplicate_images": 5, "leaked": 2}}}
    found = tracking.metrics(summary)
    assert {k: found[k] for k in ("accuracy_without_leaked", "leakage_gain", "robust_accuracy",
                                  "fgsm_accuracy", "slice_gap", "suspected_label_errors",
                                  "duplicate_images", "leaked_images")} == {
        "accuracy_without_leaked": 0.91, "leakage_gain": 0.02, "robust_accuracy": 0.7,
        "fgsm_accuracy": 0.4, "slice_gap": 0.05, "suspected_label_errors": 3.0,
        "duplicate_images": 5.0, "leaked_images": 2.0}


def test_tags_hold_the_runs_decisions():
    tags = tracking.tags(SUMMARY)
    assert tags["imagepipe.spans_trained"] == "1,2" and tags["imagepipe.span_evaluated"] == "2"
    assert tags["imagepipe.warm_start_from"] == "/out/tfx/Trainer/model/7"
    assert tags["imagepipe.pushed_version"] == "17" and "imagepipe.blocked" not in tags
    assert "imagepipe.drifted" not in tags  # nothing drifted: no empty tag


def test_params_are_every_setting_as_text():
    params = tracking.params(PipelineConfig.from_values(train_spans=3))
    assert params["train_spans"] == "3" and params["image_size"] == ""
    assert set(params) >= {"data", "output", "warm_start", "allow_drift"}


def test_a_server_that_does_not_answer_is_refused_naming_the_flag():
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UsageError, match=f"--mlflow-uri http://127.0.0.1:{port}: the MLflow"):
        tracking.check_server(f"http://127.0.0.1:{port}")
