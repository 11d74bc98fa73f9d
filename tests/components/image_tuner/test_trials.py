"""What the summary reads back of a search, and the error when no trial completed."""
from components.image_tuner.trials import NoTrialError, read_best, read_trials, tuning_summary


def test_absent_files_read_as_nothing(tmp_path):
    assert read_trials(str(tmp_path)) == [] and read_best(str(tmp_path)) == {}
    assert tuning_summary(str(tmp_path), str(tmp_path), None) == {
        "trials": [], "best": {}, "trained_with": None, "stopped_early": 0}


def test_no_completed_trial_names_what_failed():
    error = NoTrialError([{"status": "INVALID", "message": "ValueError: bad width"},
                          {"status": "INVALID", "message": "ValueError: bad width"}])
    assert str(error) == "the search completed none of its 2 trials: ValueError: bad width"
