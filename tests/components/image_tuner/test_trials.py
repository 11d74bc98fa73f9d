"""What the summary reads back of a search, and the error when no trial completed."""
from components.image_tuner.trials import (NoTrialError, read_best, read_choice,
                                          read_holdout_results, read_trials, tuning_summary,
                                          write_trials)
from modules.tuning.choice import choose


def test_absent_files_read_as_nothing(tmp_path):
    assert read_trials(str(tmp_path)) == [] and read_best(str(tmp_path)) == {}
    assert read_choice(str(tmp_path)) is None and read_holdout_results(str(tmp_path)) == {}
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


def test_the_per_image_holdout_results_are_kept_for_the_choice(tmp_path):
    results = {"0": [True, True, False, True], "1": [True, False, True, True]}
    choice = choose(results, "0")
    rows = [{"trial_id": key, "status": "COMPLETED", "score": 0.75, "values": {}}
            for key in results]
    write_trials(str(tmp_path), rows, choice, results)
    assert (tmp_path / "holdout_results.json").read_text().count('"1101"') == 1
    read = read_holdout_results(str(tmp_path))
    assert read == results and list(read) == ["0", "1"]  # the order the trials ran
    assert choose(read, "0") == read_choice(str(tmp_path)) == choice
