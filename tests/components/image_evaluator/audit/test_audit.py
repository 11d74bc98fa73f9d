"""run_audit on a real exported model: every accuracy it writes carries its count and interval."""
import numpy as np
import pytest

from core.intervals import wilson
from components.image_evaluator.settings import AuditSettings

pytestmark = pytest.mark.integration  # a real SavedModel


@pytest.fixture(scope="module")
def audited(exported_model):
    from components.image_evaluator.audit.audit import PREDICTIONS, run_audit
    by_feature = {"image/slice/size": {"small": {"accuracy": 0.5, "examples": 4}}}
    audit = run_audit(exported_model.model_dir, exported_model.examples_uri,
                      AuditSettings(None, None, None), 0.5, by_feature,
                      baseline_uri=exported_model.model_dir)
    return audit, audit[PREDICTIONS]


def test_the_overall_and_per_class_accuracies_carry_their_wilson_intervals(audited):
    audit, seen = audited
    right = seen.probabilities.argmax(axis=1) == seen.labels
    assert audit["accuracy_interval"] == list(wilson(int(right.sum()), len(right)))
    for label, name in enumerate(seen.names):
        mine = right[seen.labels == label]
        if mine.size:
            assert audit["per_class"][name] == {
                "accuracy": float(mine.mean()), "examples": int(mine.size),
                "interval": list(wilson(int(mine.sum()), int(mine.size)))}
    assert sum(c["examples"] for c in audit["per_class"].values()) == audit["examples"]
    assert audit["slices"]["by_feature"]["image/slice/size"]["small"]["interval"] == list(
        wilson(2, 4))


def test_the_accuracy_without_leaked_images_and_the_baseline_carry_theirs(audited):
    audit, _ = audited
    leakage = audit["leakage"]
    left = audit["examples"] - leakage["leaked"]
    assert leakage["examples_without"] == left > 0
    assert leakage["interval"] == list(wilson(round(leakage["accuracy_without"] * left), left))
    assert leakage["interval"] != audit["accuracy_interval"] or leakage["leaked"] == 0
    baseline = audit["baseline"]  # the candidate as its own baseline
    assert baseline["examples"] == audit["examples"] and baseline["difference"] == 0
    assert baseline["interval"][0] <= 0 <= baseline["interval"][1]
    assert np.isclose(baseline["candidate_accuracy"], audit["accuracy"])
