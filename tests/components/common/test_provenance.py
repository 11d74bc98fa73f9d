"""What a push records for continuous training (spans, accuracy) and the drift gate."""
import json

from components.common.contract import ingest_report
from components.common.drift import ALLOW_DRIFT_HINT, drift_gate
from components.common.provenance import push_record, spans_of


def _drift(*drifted):
    """A verdict as ImageExampleGen writes it (components/common/drift.py compare_spans)."""
    details = {"brightness": (0.41, 0.1, "mean brightness 120 -> 40 of 255"),
               "size": (1.5, 1.0, "median size 28x28 -> 64x64\npixels"),
               "label": (0.05, 0.2, "class 'cat' share 0.50 -> 0.45"),
               "grayscale": (0.0, 0.2, "grayscale share 0.00 -> 0.00")}
    features = {name: {"value": value, "threshold": threshold, "drifted": name in drifted,
                       "detail": detail} for name, (value, threshold, detail) in details.items()}
    return {"verdict": "drift" if drifted else "ok", "drifted": list(drifted),
            "features": features, "span": 3, "previous_span": 2}


def test_spans_come_from_the_artifact_else_from_the_ingest_report():
    assert spans_of("1,2,3", {"spans": [{"span": 9}]}) == [1, 2, 3]
    assert spans_of(None, {"spans": [{"span": 4, "reused": True}, {"span": 5}]}) == [4, 5]
    assert spans_of(None, {"spans": [6, 7]}) == [6, 7]
    assert spans_of(None, {}) == [] and spans_of("", {"splits": {}}) == []


def test_drift_blocks_the_push_naming_each_feature_and_its_detail():
    blocked, overridden = drift_gate({"drift": _drift("brightness", "size")}, False)
    assert overridden is None and "\n" not in blocked
    assert blocked.endswith(ALLOW_DRIFT_HINT) and "(--allow-drift pushes anyway)" in blocked
    for words in ("brightness", "mean brightness 120 -> 40 of 255", "size",
                  "median size 28x28 -> 64x64 pixels", "span 2 -> 3"):
        assert words in blocked, blocked
    assert "label" not in blocked.split("(span")[0]  # under its threshold


def test_allow_drift_pushes_and_says_what_it_overrode():
    blocked, overridden = drift_gate({"drift": _drift("brightness")}, True)
    assert blocked is None
    assert overridden.startswith("pushed despite drift in brightness")


def test_no_verdict_an_ok_one_or_a_first_span_pushes():
    first = {"verdict": "not compared", "reason": "no earlier span", "drifted": []}
    for report in ({}, {"drift": _drift()}, {"drift": first}):
        assert drift_gate(report, False) == (None, None)


def test_the_record_holds_spans_accuracy_and_an_override(tmp_path):
    (tmp_path / "ingest_report.json").write_text(json.dumps({"spans": [{"span": 2}]}))
    report = ingest_report(str(tmp_path))
    assert push_record(None, report, 0.91, None) == {"spans": [2], "accuracy": 0.91}
    assert push_record("1", report, None, "pushed despite ...")["drift_overridden"] == \
        "pushed despite ..."
    assert ingest_report(str(tmp_path / "nothing")) == {} and ingest_report(None) == {}


def test_a_window_no_newer_than_a_rolled_back_versions_is_not_pushed(tmp_path):
    from components.image_pusher.push import _rolled_back_window
    from components.common.versions import ServingState, publish, write_serving_state
    model = tmp_path / "model"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(b"graph")
    base = str(tmp_path / "serving" / "imagepipe")
    for version, spans in ((1, [1]), (2, [1, 2])):
        publish(str(model), base, version, source_uri=f"uri://{version}",
                record={"spans": spans, "accuracy": 0.9})
    assert _rolled_back_window(base, [1, 2]) is None  # nothing rolled back yet
    write_serving_state(base, ServingState(1, (2,)))
    blocked = _rolled_back_window(base, [2])  # the same window, retrained from version 1
    assert "version 2" in blocked and "spans up to 2" in blocked
    assert _rolled_back_window(base, [2, 3]) is None  # a new span pushes
    assert _rolled_back_window(base, []) is None  # data without spans cannot be compared
