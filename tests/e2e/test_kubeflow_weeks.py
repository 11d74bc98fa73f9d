"""A scheduled compiled pipeline, week by week, on a gs:// root, as open-source KFP runs it.

tests/support/kubeflow_weeks_steps.py runs inside `scripts/with_gcs.sh` (a real GCS
server): one compiled package, run through kubeflow/run_local.py week after week as
spans arrive (or do not), a week whose serving check hangs, `imagepipe gc` and a
rollback. The tests read each week's step states (done, cached, skipped), what it
printed, its judged.json entry and the push destination. The --keep-types weeks
are tests/e2e/test_kubeflow_typed_weeks.py.
"""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

# The weeks run in the module's fixture: about 10 minutes alone on 2 cores.
pytestmark = [pytest.mark.slow, NEEDS_ROOT, pytest.mark.timeout(1800)]
TRAINED = ("Trainer", "Evaluator", "Pusher")


@pytest.fixture(scope="module")
def weeks(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("weeks")
    found = run_steps("tests.support.kubeflow_weeks_steps", work / "results.json", work,
                      timeout=1700)
    assert "raised" not in found, found["raised"]
    return found


def test_week_one_trains_from_scratch_and_pushes_version_one(weeks):
    week = exited(weeks["week1"])
    assert all(week["states"][step] == "done" for step in TRAINED), week["states"]
    assert len(week["pushed"]) == 1
    (record,) = week["pushed"].values()
    assert record["warm_started_from"] is None
    assert "verdict: pushed: pushed version" in week["stdout"]
    assert week["judged"]["verdict"] == "pushed"


def test_a_week_without_a_new_span_trains_and_pushes_nothing(weeks):
    week = exited(weeks["week2"])
    assert week["states"]["ImageExampleGen"] == "done"
    assert all(week["states"][step] == "skipped" for step in TRAINED), week["states"]
    assert "nothing new: no new data" in week["stdout"]
    assert "(pushed: pushed version" in week["stdout"]
    assert week["pushed"] == weeks["week1"]["pushed"]


def test_a_serving_check_that_times_out_fails_the_week_and_judges_nothing(weeks):
    week = exited(weeks["week3"], code=1)
    assert week["states"]["Trainer"] == "done", week["states"]
    assert "failed: InfraValidator: " in week["stdout"]
    assert "the serving check timed out" in week["stdout"]
    assert week["pushed"] == weeks["week1"]["pushed"]
    judged = week["judged"]
    assert (judged["state"], judged["verdict"], judged["failures"]) == (
        "failed", "infrastructure", 1), judged


def test_the_next_week_retries_the_same_window_and_pushes(weeks):
    week = exited(weeks["week4"])
    assert all(week["states"][step] == "done" for step in TRAINED), week["states"]
    assert "retried: retrying after 1 failed try on these inputs" in week["stdout"]
    assert "the serving check timed out" in week["stdout"]
    assert week["judged"]["verdict"] == "pushed" and week["judged"]["failures"] == 1
    (first,) = weeks["week1"]["pushed"]
    assert len(week["pushed"]) == 2
    newest = week["pushed"][max(week["pushed"], key=int)]
    assert newest["warm_started_from"]["version"] == int(first)
    assert newest["spans"] == [1, 2]


def test_a_drifted_span_is_judged_on_the_data_and_nothing_is_pushed(weeks):
    week = exited(weeks["week5"])
    assert week["states"]["Evaluator"] == "done" and week["states"]["Pusher"] == "done"
    assert week["drift"]["verdict"] == "drift", week["drift"]
    assert "brightness" in week["drift"]["drifted"]
    assert (week["drift"]["span"], week["drift"]["previous_span"]) == (3, 2)
    assert week["pushed"] == weeks["week4"]["pushed"]
    # Where an operator looks first: the run's output and judged.json say why.
    assert "verdict: data: the Evaluator did not bless it: " in week["stdout"]
    assert "mean brightness" in week["stdout"]
    assert week["judged"]["verdict"] == "data"
    assert "mean brightness" in week["judged"]["reason"]


def test_week_four_judged_its_span_against_span_one_and_found_no_drift(weeks):
    assert weeks["week4"]["drift"]["verdict"] == "ok", weeks["week4"]["drift"]
    assert weeks["week1"]["drift"]["verdict"] == "not compared"


def test_gc_keeps_the_served_version_and_deletes_the_rest(weeks):
    gc = exited(weeks["gc"])
    served = max(weeks["week4"]["pushed"], key=int)
    assert list(gc["pushed"]) == [served]
    assert gc["after"] < gc["before"], (gc["before"], gc["after"])
    assert gc["record"]["deleted"], gc["record"]


def test_after_gc_a_week_warm_starts_from_the_kept_version_and_pushes(weeks):
    week = exited(weeks["week6"])
    assert all(week["states"][step] == "done" for step in TRAINED), week["states"]
    kept = max(weeks["gc"]["pushed"], key=int)
    assert len(week["pushed"]) == 2
    newest = week["pushed"][max(week["pushed"], key=int)]
    assert newest["warm_started_from"]["version"] == int(kept)
    assert newest["spans"] == [1, 2, 3, 4]


def test_a_rollback_to_the_version_gc_kept_works(weeks):
    rollback = exited(weeks["rollback"])
    assert rollback["served"] == rollback["to"] == int(max(weeks["gc"]["pushed"], key=int))
