"""The judged record: what the last decided run's inputs were, per model, in the serving root."""
import json

from components.image_pusher.judged_inputs import JUDGED_FILE, is_new, last_judged, record_judged


def test_inputs_never_judged_are_new(tmp_path):
    new, reason = is_new(str(tmp_path / "serving" / "m"), "abc")
    assert new and "no earlier run" in reason


def test_the_same_inputs_are_not_new_and_the_reason_names_the_spans_and_decision(tmp_path):
    serving = str(tmp_path / "serving" / "m")
    record_judged(serving, "abc", "1,2", "pushed version 7", 7)
    new, reason = is_new(serving, "abc")
    assert not new
    assert reason.startswith("no new data: spans 1,2 and the same settings were judged at ")
    assert "(pushed version 7)" in reason
    assert is_new(serving, "abd")[0]


def test_models_keep_their_own_entries_and_the_file_is_replaced_whole(tmp_path):
    root = tmp_path / "serving"
    record_judged(str(root / "a"), "x", None, "not pushed: drift", None)
    record_judged(str(root / "b"), "y", "3", "pushed version 9", 9)
    record = json.loads((root / JUDGED_FILE).read_text())
    assert set(record) == {"a", "b"}
    assert last_judged(str(root / "a"))["decision"] == "not pushed: drift"
    assert last_judged(str(root / "b"))["version"] == 9


def test_an_unreadable_record_counts_as_never_judged(tmp_path):
    root = tmp_path / "serving"
    root.mkdir()
    (root / JUDGED_FILE).write_text("{not json")
    assert is_new(str(root / "m"), "abc")[0]
