"""A --tune search in the report and in the lines a run prints."""
from report.console import tuning_lines
from report.html_sections import tuning

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


def test_the_plans_trial_is_marked_and_the_verdict_says_why_it_was_kept():
    rows = [{**TUNING["trials"][1], "trial_id": "0", "values": {}, "plan": True},
            {**TUNING["trials"][0], "trial_id": "1"}]
    choice = {"trained": "0", "plan_won": True, "plan_trial": "0", "plan_score": 0.62,
              "best_trial": "1", "best_score": 0.91, "margin": 0.29,
              "margin_required": 0.3, "holdout_images": 10}
    found = {**TUNING, "trials": rows, "best": {}, "trained_with": None, "choice": choice}
    page = tuning({"tuning": found})
    assert "<td>0 (plan) (trained)</td>" in page and "<td>1</td>" in page
    assert "require more than +0.3000" in page
    assert tuning_lines(found)[1] == (
        "          kept the plan's settings (trial 0, holdout 0.6200): the best other, trial 1 "
        "(0.9100), is +0.2900 from it, where 10 held-out images require more than +0.3000")
