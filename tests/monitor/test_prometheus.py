"""push_metrics against a real Pushgateway, read back from its /metrics page."""
import datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.errors import PipelineFailed
from monitor.prometheus import push_metrics
from tests.support.prometheus_servers import pushgateway
from tests.support.servers import get

pytestmark = pytest.mark.integration  # a Pushgateway started as a subprocess

TIME = "2026-11-27T12:00:00Z"


def _result(version=17, accuracy=True):
    """A monitor result as monitor.json holds it (monitor/monitor.py)."""
    measures = {
        "input_drift": {"brightness": {"value": 0.8, "threshold": 0.1},
                        "size": {"value": 0.0, "threshold": 0.2}},
        "prediction_drift": {"value": 0.3, "threshold": 0.15},
        "confidence": {"value": 0.05, "threshold": 0.1},
        "low_confidence_share": {"value": 0.25, "threshold": 0.1, "reference": 0.05},
        "accuracy": {"value": 0.9, "threshold": 0.05, "reference": 0.97, "labeled": 50}}
    if not accuracy:
        del measures["accuracy"]
    return {"model": "digits", "version": version, "time": TIME, "seconds": 3.5,
            "window": {"records": 200, "scored": 198, "bad": 2}, "measures": measures,
            "alerts": [{"kind": "input_drift"}, {"kind": "prediction_drift"}]}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with pushgateway(tmp_path_factory.mktemp("pushgateway")) as url:
        yield url


def _samples(url):
    """{(name, feature label or None): sample} of the gateway's imagepipe metrics."""
    return {(s.name, s.labels.get("feature")): s
            for family in text_string_to_metric_families(get(url + "/metrics"))
            for s in family.samples if s.name.startswith("imagepipe_monitor_")}


def test_every_measure_goes_out_beside_its_threshold_with_the_model_labels(gateway):
    push_metrics(gateway, _result())
    samples = _samples(gateway)
    values = {key: s.value for key, s in samples.items()}
    assert values[("imagepipe_monitor_input_drift", "brightness")] == 0.8
    assert values[("imagepipe_monitor_input_drift_threshold", "brightness")] == 0.1
    assert values[("imagepipe_monitor_input_drift", "size")] == 0.0
    assert values[("imagepipe_monitor_prediction_drift", None)] == 0.3
    assert values[("imagepipe_monitor_confidence_drift_threshold", None)] == 0.1
    assert values[("imagepipe_monitor_window_records", None)] == 200
    assert values[("imagepipe_monitor_window_bad_records", None)] == 2
    assert values[("imagepipe_monitor_alerts", None)] == 2
    assert values[("imagepipe_monitor_duration_seconds", None)] == 3.5
    sample = samples[("imagepipe_monitor_prediction_drift", None)]
    assert sample.labels == {"job": "imagepipe_monitor", "instance": "", "model": "digits",
                             "version": "17"}


def test_relative_thresholds_go_out_as_the_line_the_value_must_not_cross(gateway):
    """The eval split's share plus the allowed rise; its accuracy less the allowed drop."""
    push_metrics(gateway, _result())
    values = {name: s.value for (name, _), s in _samples(gateway).items()}
    assert values["imagepipe_monitor_low_confidence_ratio"] == 0.25
    assert values["imagepipe_monitor_low_confidence_ratio_threshold"] == 0.15
    assert values["imagepipe_monitor_accuracy_ratio"] == 0.9
    assert values["imagepipe_monitor_accuracy_ratio_threshold"] == 0.92


def test_last_success_is_the_results_time_in_unix_seconds(gateway):
    push_metrics(gateway, _result())
    pushed = _samples(gateway)[("imagepipe_monitor_last_success_timestamp_seconds", None)]
    expected = datetime.datetime(2026, 11, 27, 12, tzinfo=datetime.timezone.utc).timestamp()
    assert pushed.value == expected


def test_a_push_replaces_the_models_earlier_metrics(gateway):
    """A new version's push leaves no series of the old one, nor an accuracy without labels."""
    push_metrics(gateway, _result(version=17))
    push_metrics(gateway, _result(version=18, accuracy=False))
    samples = _samples(gateway)
    assert {s.labels["version"] for s in samples.values()} == {"18"}
    assert ("imagepipe_monitor_accuracy_ratio", None) not in samples


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "GATEWAY/not-a-gateway",
                                 "pushgateway 9091"])
def test_a_failed_push_names_the_flag_and_the_url(gateway, url):
    """A closed port (connection refused), a server that answers 404, a malformed URL."""
    url = url.replace("GATEWAY", gateway)
    with pytest.raises(PipelineFailed) as failed:
        push_metrics(url, _result())
    assert f"--pushgateway {url}: the Pushgateway did not take the metrics" in str(failed.value)
