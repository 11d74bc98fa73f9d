"""What gc keeps and deletes, decided on synthetic listings (retention/policy.py)."""
import pytest

from retention.inventory import (ARTIFACT, ATTEMPT, PARTIAL, RUN, SPAN_ENTRY, TFLITE, VERSION,
                                 Unit)
from retention.policy import YOUNG, Facts, decide, holds, kept_versions, newest_run

NOW = 1_000_000.0
DAY = 86400.0
OLD = NOW - 30 * DAY


def _unit(path, kind, **fields) -> Unit:
    return Unit(path, kind, size=10, newest=fields.pop("newest", OLD), **fields)


def _facts(versions, sources=None, **more) -> Facts:
    return Facts(versions=versions, sources=sources or {}, **more)


def _verdicts(units, facts, min_age_s=DAY) -> dict:
    return {d.unit.path: (d.keep, d.reason) for d in decide(units, facts, min_age_s, NOW)}


def test_the_served_the_pinned_and_the_n_newest_versions_are_kept():
    kept = kept_versions([100, 200, 300, 400, 500], served=200, pinned=200, keep=2)
    assert kept == {200: "served; pinned by a rollback", 400: "one of the 2 newest",
                    500: "one of the 2 newest"}


def test_the_served_version_is_kept_when_it_is_the_newest():
    assert kept_versions([100, 200, 300], 300, None, 1) == {300: "served; one of the 1 newest"}


def test_nothing_pushed_keeps_no_version():
    assert kept_versions([], None, None, 3) == {}


def test_versions_outside_the_kept_ones_and_incomplete_ones_are_deleted():
    units = [_unit("s/100", VERSION, version=100), _unit("s/200", VERSION, version=200),
             _unit("s/250", VERSION, version=250, complete=False)]
    verdicts = _verdicts(units, _facts({200: "served"}, keep_versions=1))
    assert verdicts["s/200"] == (True, "served")
    assert verdicts["s/100"] == (False, "older than the 1 newest, neither served nor pinned")
    assert verdicts["s/250"] == (False, "incomplete: a push that never finished")


def test_tflite_versions_follow_the_kept_versions_and_the_pointer():
    units = [_unit(f"t/{v}", TFLITE, version=v) for v in (100, 200, 300)]
    verdicts = _verdicts(units, _facts({300: "served"}, tflite_current=200))
    assert verdicts["t/300"] == (True, "goes with kept version 300")
    assert verdicts["t/200"] == (True, "the TFLite CURRENT pointer names it")
    assert verdicts["t/100"] == (False, "its SavedModel version is not kept")


def test_partial_pushes_and_abandoned_attempts_are_deleted_once_old_enough():
    units = [_unit("s/.4.partial-ab", PARTIAL), _unit("s/.5.partial-cd", PARTIAL,
                                                      newest=NOW - 60),
             _unit("spans/span-1-k/attempt-x", ATTEMPT)]
    verdicts = _verdicts(units, _facts({}))
    assert verdicts["s/.4.partial-ab"][0] is False
    assert verdicts["s/.5.partial-cd"] == (True, YOUNG)  # a push writing it now
    assert verdicts["spans/span-1-k/attempt-x"][0] is False


def test_complete_span_entries_are_kept_and_incomplete_ones_deleted():
    units = [_unit("spans/span-1-a", SPAN_ENTRY), _unit("spans/span-2-b", SPAN_ENTRY,
                                                        complete=False)]
    verdicts = _verdicts(units, _facts({}))
    assert verdicts["spans/span-1-a"][0] is True
    assert verdicts["spans/span-2-b"] == (False, "no ingestion completed it (no _COMPLETE "
                                                 "marker)")


def test_compiled_runs_holding_a_kept_model_and_the_newest_run_are_kept():
    units = [_unit("r/p/run-a", RUN, newest=OLD), _unit("r/p/run-b", RUN, newest=OLD + 1),
             _unit("r/p/run-c", RUN, newest=OLD + 2)]
    facts = _facts({2: "served"}, {2: "r/p/run-a/Trainer/model"})
    verdicts = _verdicts(units, facts)
    assert verdicts["r/p/run-a"] == (True, "the run of kept version 2's model")
    assert verdicts["r/p/run-c"] == (True, "the newest run")
    assert verdicts["r/p/run-b"] == (False, "an older run")
    assert newest_run(units) == "r/p/run-c"


def test_local_artifacts_are_kept_by_lineage_or_as_a_kept_model():
    units = [_unit("r/Trainer/model/8", ARTIFACT, artifact_ids=(8,)),
             _unit("r/Transform/transform_graph/7", ARTIFACT, artifact_ids=(7,)),
             _unit("r/Trainer/model/3", ARTIFACT, artifact_ids=(3,)),
             _unit("r/Trainer/model/9", ARTIFACT, recorded=False)]
    facts = _facts({5: "served"}, {5: "r/Trainer/model/8"},
                   lineage={"r/Transform/transform_graph/7": "lineage of version 5"})
    verdicts = _verdicts(units, facts)
    assert verdicts["r/Trainer/model/8"] == (True, "kept version 5's model")
    assert verdicts["r/Transform/transform_graph/7"] == (True, "lineage of version 5")
    assert verdicts["r/Trainer/model/3"] == (False, "an older run's artifact")
    assert verdicts["r/Trainer/model/9"] == (False, "not in ML Metadata: left by an "
                                                    "interrupted run")


@pytest.mark.parametrize("min_age_s, newest, keep", [
    (DAY, NOW - 3600, True),  # written an hour ago: a running pipeline's
    (DAY, NOW - 2 * DAY, False),
    (0.0, NOW - 1, False),  # --min-age 0: no age limit
    (DAY, None, False),  # no file at all (an object store has no empty folders)
])
def test_min_age_keeps_what_was_modified_recently(min_age_s, newest, keep):
    unit = Unit("r/p/run-a", RUN, newest=newest)
    other = Unit("r/p/run-z", RUN, newest=NOW)  # the newest run
    [decision, _] = decide([unit, other], _facts({}), min_age_s, NOW)
    assert decision.keep is keep
    assert decision.reason == (YOUNG if keep else "an older run")


def test_holds_is_the_folder_or_under_it_and_never_a_sibling_with_a_longer_name():
    assert holds("r/run-a", "r/run-a/Trainer/model")
    assert holds("r/run-a/", "r/run-a")
    assert not holds("r/run-a", "r/run-ab/Trainer/model")
