"""What a push records for continuous training (spans, accuracy) and the drift gate."""
import json

from core.contract import ingest_report
from components.drift_validator.verdict import ALLOW_DRIFT_HINT, drift_gate
from components.image_pusher.provenance import push_record, spans_of
from tests.support.models import stand_in_model


def _drift(*drifted):
    """A verdict as the DistributionValidator writes it (drift_validator/verdict.py judged)."""
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
    blocked, overridden = drift_gate(_drift("brightness", "size"), False)
    assert overridden is None and "\n" not in blocked
    assert blocked.endswith(ALLOW_DRIFT_HINT) and "(--allow-drift pushes anyway)" in blocked
    for words in ("brightness", "mean brightness 120 -> 40 of 255", "size",
                  "median size 28x28 -> 64x64 pixels", "span 2 -> 3"):
        assert words in blocked, blocked
    assert "label" not in blocked.split("(span")[0]  # under its threshold


def test_allow_drift_pushes_and_says_what_it_overrode():
    blocked, overridden = drift_gate(_drift("brightness"), True)
    assert blocked is None
    assert overridden.startswith("pushed despite drift in brightness")


def test_no_verdict_an_ok_one_or_a_first_span_pushes():
    first = {"verdict": "not compared", "reason": "no earlier span", "drifted": []}
    for verdict in (None, {}, _drift(), first):
        assert drift_gate(verdict, False) == (None, None)


def test_the_release_gates_on_the_verdict_recorded_on_the_blessing(tmp_path):
    """Not on the ingest report's drift entry: that only says which spans were compared."""
    from types import SimpleNamespace
    from components.image_pusher.provenance import release_of
    (tmp_path / "ingest_report.json").write_text(json.dumps(
        {"drift": {"span": 3, "previous_span": 2, "compared": True, "reason": None}}))
    examples = SimpleNamespace(uri=str(tmp_path), get_custom_property=lambda name: "2,3")
    for allow in (False, True):
        properties = {"accuracy": 0.9, "drift": json.dumps(_drift("brightness"))}
        release = release_of(examples, SimpleNamespace(get_custom_property=properties.get),
                             allow)
        assert release.drift == _drift("brightness") and release.record["spans"] == [2, 3]
        assert bool(release.blocked) != allow
        assert ("drift_overridden" in release.record) == allow
    unjudged = release_of(examples, SimpleNamespace(get_custom_property={}.get), False)
    assert unjudged.drift is None and unjudged.blocked is None


def test_the_record_holds_spans_accuracy_and_an_override(tmp_path):
    (tmp_path / "ingest_report.json").write_text(json.dumps({"spans": [{"span": 2}]}))
    report = ingest_report(str(tmp_path))
    assert push_record(None, report, 0.91, None) == {"spans": [2], "accuracy": 0.91}
    assert push_record("1", report, None, "pushed despite ...")["drift_overridden"] == \
        "pushed despite ..."
    assert ingest_report(str(tmp_path / "nothing")) == {} and ingest_report(None) == {}


def test_a_window_no_newer_than_a_rolled_back_versions_is_not_pushed(tmp_path):
    from components.image_pusher.push import _rolled_back_window
    from components.image_pusher.versions import ServingState, publish, write_serving_state
    model = stand_in_model(tmp_path / "model")
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


def _trained(root, execution: int, warm_start) -> str:
    """A local Trainer's Model artifact, with its ModelRun's fit_stats.json beside it."""
    model = root / "Trainer" / "model" / str(execution)
    (model / "Format-Serving").mkdir(parents=True)
    (model / "Format-Serving" / "saved_model.pb").write_bytes(b"graph")
    run = root / "Trainer" / "model_run" / str(execution)
    run.mkdir(parents=True)
    (run / "fit_stats.json").write_text(json.dumps({"epochs_run": 2, "warm_start": warm_start}))
    return str(model)


def test_fit_stats_are_beside_the_model_locally_and_on_kfp():
    from components.image_pusher.provenance import fit_stats_path
    assert fit_stats_path("/r/Trainer/model/12") == "/r/Trainer/model_run/12/fit_stats.json"
    assert fit_stats_path("gs://b/p/run-1/Trainer/model") == \
        "gs://b/p/run-1/Trainer/model_run/fit_stats.json"


def test_a_local_base_models_version_is_found_by_its_uri(tmp_path):
    from components.image_pusher.provenance import warm_started_from
    from components.image_pusher.versions import publish
    base = str(tmp_path / "serving" / "m")
    first = _trained(tmp_path, 1, {"from": None, "reason": "no earlier blessed model"})
    publish(first + "/Format-Serving", base, 100, source_uri=first)
    assert warm_started_from(first, base) is None  # from scratch
    second = _trained(tmp_path, 2, {"from": first, "reason": "same network"})
    assert warm_started_from(second, base) == {"version": 100, "model": first}
    never_pushed = _trained(tmp_path, 3, {"from": str(tmp_path / "x"), "reason": "..."})
    assert warm_started_from(never_pushed, base) == {"version": None,
                                                     "model": str(tmp_path / "x")}


def test_a_compiled_runs_base_names_its_version_and_the_record_its_model(tmp_path):
    from components.image_pusher.provenance import warm_started_from
    from components.image_pusher.versions import publish
    base = str(tmp_path / "serving" / "m")
    first = _trained(tmp_path, 1, None)  # an older run: no warm_start entry
    publish(first + "/Format-Serving", base, 100, source_uri=first)
    assert warm_started_from(first, base) is None
    copy = str(tmp_path / "pushed_warm_start" / "model")
    second = _trained(tmp_path, 2, {"from": copy, "version": 100, "reason": "same network"})
    assert warm_started_from(second, base) == {"version": 100, "model": first}
    assert warm_started_from(str(tmp_path / "no-such-model"), base) is None
    assert warm_started_from(None, base) is None


def test_the_pushers_release_records_warm_started_from(tmp_path):
    from types import SimpleNamespace
    from components.image_pusher.provenance import release_of
    model = _trained(tmp_path, 1, {"from": None, "reason": "nothing pushed yet"})
    properties = {"accuracy": 0.9, "current_model": model}
    blessing = SimpleNamespace(get_custom_property=properties.get)
    record = release_of(None, blessing, False, str(tmp_path / "serving" / "m")).record
    assert record == {"spans": [], "accuracy": 0.9, "warm_started_from": None}
    assert "warm_started_from" not in release_of(None, blessing, False).record  # the card's
