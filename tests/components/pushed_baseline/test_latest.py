"""The Kubeflow target's baseline: the newest complete push that is not the candidate's."""
from components.image_pusher.versions import ServingState, publish, write_serving_state
from components.pushed_baseline.latest import latest_other_than
from tests.support.models import stand_in_model


def _model(tmp_path):
    return stand_in_model(tmp_path / "model")


def test_first_run_has_no_baseline(tmp_path):
    assert latest_other_than(str(tmp_path / "serving" / "m"), "uri://candidate") is None


def test_the_newest_other_push_is_the_baseline_and_the_candidates_own_is_skipped(tmp_path):
    base, model = str(tmp_path / "m"), _model(tmp_path)
    publish(model, base, 1, source_uri="uri://a")
    publish(model, base, 2, source_uri="uri://b")
    assert latest_other_than(base, "uri://new") == f"{base}/2"
    # A cached re-run: the candidate is the model pushed last; compare with the one before.
    assert latest_other_than(base, "uri://b") == f"{base}/1"


def test_versions_without_a_record_count_and_incomplete_ones_do_not(tmp_path):
    base, model = tmp_path / "m", _model(tmp_path)
    publish(model, str(base), 1)  # pushed without provenance, e.g. by hand
    (base / "2" / "variables").mkdir(parents=True)  # no saved_model.pb: not loadable
    assert latest_other_than(str(base), "uri://x") == f"{base}/1"


def test_it_reads_object_stores(tmp_path):
    base = "ram://pushed-baseline-test/serving/m"
    publish(str(_model(tmp_path)), base, 4, source_uri="uri://a")
    assert latest_other_than(base, "uri://b") == f"{base}/4"
    assert latest_other_than(base, "uri://a") is None


def test_the_served_version_is_the_baseline_after_a_rollback(tmp_path):
    base, model = str(tmp_path / "serving" / "m"), _model(tmp_path)
    for version in (1, 2, 3):
        publish(model, base, version, source_uri=f"uri://{version}")
    write_serving_state(base, ServingState(pinned=2, rolled_back=(3,)))
    assert latest_other_than(base, "uri://new") == f"{base}/2"
    assert latest_other_than(base, "uri://2") == f"{base}/1"  # a cached re-run of the served
    # A later push lifts the pin; the rolled-back version stays out.
    publish(model, base, 4, source_uri="uri://4")
    write_serving_state(base, ServingState(pinned=None, rolled_back=(3,)))
    assert latest_other_than(base, "uri://4") == f"{base}/2"
