"""What the summary reads back of a search, and the error when no trial completed."""
from components.image_tuner.trials import (NoTrialError, read_best, read_choice, read_trials,
                                          tuning_summary, write_trials)


def test_absent_files_read_as_nothing(tmp_path):
    assert read_trials(str(tmp_path)) == [] and read_best(str(tmp_path)) == {}
    assert read_choice(str(tmp_path)) is None
    assert tuning_summary(str(tmp_path), str(tmp_path), None) == {
        "trials": [], "best": {}, "trained_with": None, "choice": None, "stopped_early": 0}


def test_the_choice_is_read_back_beside_the_trials(tmp_path):
    rows = [{"trial_id": "0", "status": "COMPLETED", "score": 0.9, "values": {}, "plan": True}]
    write_trials(str(tmp_path), rows, {"trained": "0", "plan_won": True})
    summary = tuning_summary(str(tmp_path), str(tmp_path), None)
    assert summary["trials"] == rows and summary["choice"] == {"trained": "0", "plan_won": True}


def test_no_completed_trial_names_what_failed():
    error = NoTrialError([{"status": "INVALID", "message": "ValueError: bad width"},
                          {"status": "INVALID", "message": "ValueError: bad width"}])
    assert str(error) == "the search completed none of its 2 trials: ValueError: bad width"
