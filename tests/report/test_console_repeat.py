"""The run's last lines say how to repeat its training, or why it does not repeat."""
from report.console import _repeat_line


def test_a_repeatable_run_prints_the_flags_to_add():
    training = {"epochs_decided": 13, "interrupted": None,
                "repeat_with": ["--epochs", "13", "--time-budget", "none"]}
    assert _repeat_line(training) == [
        "repeat    add --epochs 13 --time-budget none to this command to train the same again"]


def test_an_interrupted_run_says_where_and_why_and_offers_no_flags():
    training = {"epochs_decided": 13, "repeat_with": None,
                "interrupted": {"epoch": 9, "reason": "early stopping: val_loss did not "
                                                      "improve for 2 epochs"}}
    assert _repeat_line(training) == [
        "repeat    none: training was interrupted at epoch 9: early stopping: val_loss did "
        "not improve for 2 epochs"]
    warm = {"epochs_decided": 5, "repeat_with": None, "interrupted": None}
    assert _repeat_line(warm)[0].startswith("repeat    none: it started from a warm start's")


def test_a_run_without_the_record_prints_nothing():
    assert _repeat_line(None) == [] and _repeat_line({"epochs_run": 8}) == []
