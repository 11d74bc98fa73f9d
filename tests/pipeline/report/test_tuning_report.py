"""A --tune search in the report and in the lines a run prints."""
from pipeline.report.console import tuning_lines
from pipeline.report.sections import tuning

TUNING = {
    "trials": [
        {"trial_id": "0", "status": "COMPLETED", "score": 0.91, "values": {"width": 1.5},
         "epochs_run": 10, "epochs_planned": 10, "stopped": None},
        {"trial_id": "1", "status": "COMPLETED", "score": 0.62, "values": {"width": 0.5},
         "epochs_run": 2, "epochs_planned": 10, "stopped": "median rule"},
        {"trial_id": "2", "status": "INVALID", "score": None, "values": {"width": 1.0},
         "message": "ValueError: too deep"}],
    "best": {"width": 1.5}, "trained_with": {"width": 1.5}, "stopped_early": 1}


def test_every_trial_is_a_row_and_the_trained_one_is_marked():
    page = tuning({"tuning": TUNING})
    assert page.count("<tr>") == 4  # the header and three trials
    assert "<td>0 (trained)</td><td>0.9100</td><td>1.5</td><td>10/10</td>" in page
    assert "median rule" in page and "ValueError: too deep" in page


def test_an_untuned_run_has_no_section_and_no_line():
    assert tuning({"tuning": None}) == "" and tuning_lines(None) == []


def test_the_run_says_how_many_trials_and_what_it_trained_with():
    assert tuning_lines(TUNING) == ["tuned     3 trials (1 stopped early), best holdout "
                                    "accuracy 0.9100; trained with width 1.5"]
