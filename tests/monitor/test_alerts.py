"""Alert rules: a value strictly over its threshold alerts; one equal to it does not."""
import pytest

from monitor.alerts import alerts


def _drift(value, threshold=0.1):
    return {"input_drift": {"brightness": {"value": value, "threshold": threshold,
                                           "window": "", "reference": ""}}}


def test_a_value_equal_to_its_threshold_does_not_alert():
    assert alerts(_drift(0.1)) == []
    assert alerts({"prediction_drift": {"value": 0.15, "threshold": 0.15}}) == []


def test_a_value_over_its_threshold_alerts_with_its_kind_and_measure():
    assert alerts(_drift(0.100001)) == [{"kind": "input_drift", "measure": "brightness",
                                         "value": 0.100001, "threshold": 0.1}]
    assert alerts({"confidence": {"value": 0.2, "threshold": 0.1}}) == [
        {"kind": "confidence", "measure": "confidence_drift", "value": 0.2, "threshold": 0.1}]


@pytest.mark.parametrize("value, alerting", [(0.3, False), (0.30001, True), (0.25, False)])
def test_the_low_confidence_share_alerts_on_its_rise_over_the_eval_share(value, alerting):
    # 0.3 - 0.2 is 0.09999999999999998 in floats: the rule must not depend on that
    found = alerts({"low_confidence_share": {"value": value, "threshold": 0.1,
                                             "reference": 0.2}})
    assert bool(found) == alerting
    if alerting:
        assert found[0]["kind"] == "confidence" and found[0]["reference"] == 0.2


@pytest.mark.parametrize("value, alerting", [(0.9, False), (0.89999, True), (0.97, False)])
def test_accuracy_alerts_on_a_drop_over_the_threshold(value, alerting):
    found = alerts({"accuracy": {"value": value, "threshold": 0.05, "reference": 0.95,
                                 "labeled": 40}})
    assert bool(found) == alerting
    if alerting:
        assert found[0]["kind"] == "accuracy"


def test_alerts_come_input_drift_first_and_skip_unmeasured():
    found = alerts({**_drift(0.5), "prediction_drift": {"value": 0.5, "threshold": 0.15},
                    "accuracy": None})
    assert [a["kind"] for a in found] == ["input_drift", "prediction_drift"]
