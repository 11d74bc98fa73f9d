"""Weeks 1 and 2 of the scheduled compiled pipeline with --keep-types, as Vertex passes
artifacts (tests/support/kubeflow_weeks_steps.py, `typed`, inside scripts/with_gcs.sh)."""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

pytestmark = [pytest.mark.slow, NEEDS_ROOT]
TRAINED = ("Trainer", "Evaluator", "Pusher")


@pytest.fixture(scope="module")
def weeks(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("typed_weeks")
    found = run_steps("tests.support.kubeflow_weeks_steps", work / "results.json", work,
                      "typed")
    assert "raised" not in found, found["raised"]
    return found


def test_keep_types_week_one_pushes_too(weeks):
    week = exited(weeks["typed_week1"])
    assert len(week["pushed"]) == 1, week["stdout"][-3000:]


def test_a_typed_week_without_a_new_span_trains_and_pushes_nothing(weeks):
    week = exited(weeks["typed_week2"])
    assert week["states"]["ImageExampleGen"] == "done"
    assert all(week["states"][step] == "skipped" for step in TRAINED), week["states"]
    assert "nothing new: no new data" in week["stdout"]
    assert week["pushed"] == weeks["typed_week1"]["pushed"]
