"""refusal: what a not-blessed model's verdict blames, and the words it gives."""
import json

from tfx.types import standard_artifacts

from components.image_pusher.refusal import blocked, pushed, refused


def _blessing(kind, blessed: int, **properties):
    artifact = kind()
    artifact.set_int_custom_property("blessed", blessed)
    for name, value in properties.items():
        artifact.set_string_custom_property(name, value)
    return artifact


def test_a_drift_veto_blames_the_data_in_the_vetos_words():
    evaluator = _blessing(standard_artifacts.ModelBlessing, 0, drift=json.dumps(
        {"verdict": "drift"}), vetoed="not pushed: drift in brightness (mean 33 -> 222)")
    verdict = refused(evaluator, None)
    assert (verdict.kind, verdict.reason) == (
        "data", "the Evaluator did not bless it: drift in brightness (mean 33 -> 222)")


def test_a_threshold_or_a_failed_serving_check_blames_the_model():
    evaluator = _blessing(standard_artifacts.ModelBlessing, 0,
                          reason="accuracy 0.4 below --accuracy-threshold 0.5")
    assert refused(evaluator, None).kind == "model"
    assert refused(evaluator, None).reason.endswith("below --accuracy-threshold 0.5")
    blessed = _blessing(standard_artifacts.ModelBlessing, 1)
    infra = _blessing(standard_artifacts.InfraBlessing, 0,
                      reason="the SavedModel did not load: OSError: x")
    verdict = refused(blessed, infra)
    assert (verdict.kind, verdict.reason) == (
        "model", "the serving check refused it: the SavedModel did not load: OSError: x")
    assert refused(blessed, _blessing(standard_artifacts.InfraBlessing, 1)) is None


def test_the_pushers_own_gates_and_a_push():
    assert blocked("not pushed: trained on spans up to 2", None).kind == "data"
    assert blocked("not pushed: version 7 was rolled back", "model").kind == "model"
    assert pushed(7).reason == "pushed version 7"
