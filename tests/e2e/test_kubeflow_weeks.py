"""A scheduled compiled pipeline, week by week, on a gs:// root, as open-source KFP runs it.

tests/support/kubeflow_weeks_steps.py runs inside `scripts/with_gcs.sh` (a real GCS
server): one compiled package, run through kubeflow/run_local.py four times as
spans arrive (or do not), and twice more with --keep-types. The tests read
each week's step states (done, cached, skipped) and the push destination.
"""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

pytestmark = [pytest.mark.slow, NEEDS_ROOT]
TRAINED = ("Trainer", "Evaluator", "Pusher")


@pytest.fixture(scope="module")
def weeks(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("weeks")
    found = run_steps("tests.support.kubeflow_weeks_steps", work / "results.json", work)
    assert "raised" not in found, found["raised"]
    return found


def test_week_one_trains_from_scratch_and_pushes_version_one(weeks):
    week = exited(weeks["week1"])
    assert all(week["states"][step] == "done" for step in TRAINED), week["states"]
    assert len(week["pushed"]) == 1
    (record,) = week["pushed"].values()
    assert record["warm_started_from"] is None


@pytest.mark.parametrize("name", ["week2", "typed_week2"])
def test_a_week_without_a_new_span_trains_and_pushes_nothing(weeks, name):
    week = exited(weeks[name])
    assert week["states"]["ImageExampleGen"] == "done"
    assert all(week["states"][step] == "skipped" for step in TRAINED), week["states"]
    assert "nothing new: no new data" in week["stdout"]
    first = weeks["week1" if name == "week2" else "typed_week1"]
    assert week["pushed"] == first["pushed"]


def test_keep_types_week_one_pushes_too(weeks):
    week = exited(weeks["typed_week1"])
    assert len(week["pushed"]) == 1, week["stdout"][-3000:]


def test_a_new_span_warm_starts_from_the_served_version_and_pushes(weeks):
    week = exited(weeks["week3"])
    assert all(week["states"][step] == "done" for step in TRAINED), week["states"]
    (first,) = weeks["week1"]["pushed"]
    assert len(week["pushed"]) == 2
    newest = week["pushed"][max(week["pushed"], key=int)]
    assert newest["warm_started_from"]["version"] == int(first)
    assert newest["spans"] == [1, 2]


def test_a_drifted_span_is_judged_and_nothing_is_pushed(weeks):
    week = exited(weeks["week4"])
    assert week["states"]["Evaluator"] == "done" and week["states"]["Pusher"] == "done"
    assert week["drift"]["verdict"] == "drift", week["drift"]
    assert "brightness" in week["drift"]["drifted"]
    assert (week["drift"]["span"], week["drift"]["previous_span"]) == (3, 2)
    assert week["pushed"] == weeks["week3"]["pushed"]


def test_week_three_judged_its_span_against_span_one_and_found_no_drift(weeks):
    assert weeks["week3"]["drift"]["verdict"] == "ok", weeks["week3"]["drift"]
    assert weeks["week1"]["drift"]["verdict"] == "not compared"
