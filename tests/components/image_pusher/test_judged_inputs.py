"""The judged record: the last verdict on each model's inputs, and the tries that reached none."""
import json

import pytest

from tests.support.gcs_harness import NEEDS_ROOT, run_steps

from components.image_pusher.judged_inputs import (ALERT_PREFIX, DATA, INFRASTRUCTURE,
                                                   JUDGED_FILE, MAX_FAILURES, MODEL, PUSHED,
                                                   GaveUp, begin, is_new, last_judged,
                                                   record_failure, record_judged)


@pytest.fixture
def serving(tmp_path) -> str:
    return str(tmp_path / "serving" / "m")


def test_inputs_never_judged_go_ahead_and_the_start_is_recorded(serving):
    assert is_new(serving, "abc")[0]
    new, reason = begin(serving, "abc", None)
    assert new and "no earlier run" in reason
    assert last_judged(serving)["state"] == "started"


def test_judged_inputs_are_skipped_and_the_reason_names_spans_verdict_and_why(serving):
    begin(serving, "abc", None)
    record_judged(serving, "abc", "1,2", PUSHED, "pushed version 7", 7)
    new, reason = begin(serving, "abc", None)
    assert not new
    assert reason.startswith("no new data: spans 1,2 and the same settings were judged at ")
    assert reason.endswith("(pushed: pushed version 7)")
    assert begin(serving, "abd", None)[0]  # other inputs go ahead


@pytest.mark.parametrize("verdict", [MODEL, DATA])
def test_a_verdict_on_the_model_or_the_data_is_final_at_once(serving, verdict):
    begin(serving, "abc", "3")
    record_judged(serving, "abc", "3", verdict, "the Evaluator did not bless it: drift", None)
    assert last_judged(serving)["decision"] == "not pushed: the Evaluator did not bless it: drift"
    assert begin(serving, "abc", "3") == (False, is_new(serving, "abc")[1])
    assert f"({verdict}: the Evaluator did not bless it: drift)" in is_new(serving, "abc")[1]


def test_an_infrastructure_failure_is_retried_then_given_up_with_an_alert(serving, capsys):
    timeout = "the serving check timed out: the serving process did not answer in 60 s"
    for tries in range(1, MAX_FAILURES + 1):
        new, reason = begin(serving, "abc", None)
        assert new
        if tries > 1:
            assert reason.startswith(f"retrying after {tries - 1} failed try")
            assert timeout in reason
        assert record_failure(serving, "abc", "1,2", timeout) == tries
        assert last_judged(serving)["state"] == "failed"
    with pytest.raises(GaveUp) as raised:
        begin(serving, "abc", None)
    assert str(raised.value).startswith(ALERT_PREFIX) and timeout in str(raised.value)
    assert capsys.readouterr().out.startswith(ALERT_PREFIX)
    entry = last_judged(serving)
    assert (entry["state"], entry["verdict"], entry["failures"]) == ("judged", INFRASTRUCTURE,
                                                                     MAX_FAILURES)
    assert entry["reason"].startswith(f"gave up after {MAX_FAILURES} failed tries")
    new, reason = begin(serving, "abc", None)  # later runs skip, saying why
    assert not new and "(infrastructure: gave up after" in reason


def test_a_try_that_died_without_a_word_counts_as_a_failure(serving):
    begin(serving, "abc", None)  # then the run was killed, or a step failed
    new, reason = begin(serving, "abc", None)
    assert new and "stopped before a verdict (a step failed or was stopped" in reason
    assert last_judged(serving)["failures"] == 1
    with pytest.raises(GaveUp):
        begin(serving, "abc", None)


def test_new_inputs_start_counting_again(serving):
    begin(serving, "abc", None)
    record_failure(serving, "abc", None, "timed out")
    begin(serving, "abd", None)
    assert last_judged(serving)["failures"] == 0
    assert record_failure(serving, "abd", None, "timed out") == 1


def test_models_keep_their_own_entries(tmp_path):
    root = tmp_path / "serving"
    record_judged(str(root / "a"), "x", None, DATA, "drift", None)
    record_judged(str(root / "b"), "y", "3", PUSHED, "pushed version 9", 9)
    record = json.loads((root / JUDGED_FILE).read_text())
    assert set(record) == {"a", "b"}
    assert last_judged(str(root / "a"))["decision"] == "not pushed: drift"
    assert last_judged(str(root / "b"))["version"] == 9


def test_an_unreadable_record_counts_as_never_judged_and_is_replaced(tmp_path):
    root = tmp_path / "serving"
    root.mkdir()
    (root / JUDGED_FILE).write_text("{not json")
    assert is_new(str(root / "m"), "abc")[0]
    assert begin(str(root / "m"), "abc", None)[0]
    assert set(json.loads((root / JUDGED_FILE).read_text())) == {"m"}


STEPS = "tests.components.image_pusher.judged_race_steps"
WRITES = 100


def _all_entries() -> list:
    return sorted(f"{model}-{number}" for model in ("a", "b") for number in range(WRITES))


@pytest.mark.integration  # two processes
def test_two_concurrent_writers_for_two_models_both_keep_every_entry(tmp_path):
    import subprocess
    import sys
    from tests.support.paths import REPO
    results = tmp_path / "results.json"
    subprocess.run([sys.executable, "-m", STEPS, str(results), str(tmp_path / "serving"),
                    str(WRITES)], cwd=REPO, check=True, timeout=300)
    found = json.loads(results.read_text())
    assert found["codes"] == [0, 0]
    assert found["entries"] == _all_entries()


@pytest.mark.slow
@NEEDS_ROOT
def test_two_concurrent_writers_in_a_bucket_both_keep_every_entry(tmp_path):
    found = run_steps(STEPS, tmp_path / "results.json", "gs://imagepipe-test/serving",
                      WRITES, timeout=600)
    assert found["codes"] == [0, 0], found
    assert found["entries"] == _all_entries()
