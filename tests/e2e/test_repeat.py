"""A budgeted run repeated with its own `training.repeat_with` flags: the same model, bit for bit.

    .venv/bin/python -m pytest -q tests/e2e/test_repeat.py    # two runs: about 2-4 minutes

The bundled digits with a network twice as wide in batches of 16, so that an epoch takes
seconds on 2 cores, and the smallest budget the plan accepts for them: the run reaches
the fit with (almost) nothing of the cap left, so it decides the fewest epochs a budget
trains (7 of the 400 planned) whatever the host's speed. The repeat trains them with no
budget, from scratch.
"""
import os

import numpy as np
import pytest
import tensorflow as tf

from tests.support.cli import run_pipeline
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.slow

FLAGS = ["--epochs", "400", "--batch-size", "16", "--model-width", "2",
         "--eval-steps", "2", "--accuracy-threshold", "0", "--quantize", "none",
         "--time-budget", "61s"]  # 50 s + 1 ms an image for the other stages, 10 s to train


def _run(output, *extra):
    return run_pipeline(MNIST_PNG, output, *FLAGS, *extra)


def _weights(summary):
    """The served model's layer weights by checkpoint name (not the metrics' state)."""
    prefix = os.path.join(summary["pushed"]["serving"], "variables", "variables")
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(prefix)
            if name.startswith("layer_with_weights")}


def _budgeted_run(tmp_path):
    """The budgeted run; once more where the host slowed down after the decision (others'
    work on a shared machine, which the recheck answers by cutting epochs: not repeatable)."""
    summary, stdout = _run(tmp_path / "budgeted")
    stop = summary["training"]["interrupted"]
    if stop and stop["reason"].startswith("the host slowed down"):
        summary, stdout = _run(tmp_path / "budgeted-again")
    return summary, stdout


def test_a_budgeted_run_that_cut_its_epochs_repeats_exactly_with_its_repeat_flags(tmp_path):
    budgeted, stdout = _budgeted_run(tmp_path)
    training = budgeted["training"]
    decided = training["epochs_decided"]
    assert training["interrupted"] is None, training["interrupted"]
    assert 7 <= decided < 400 and training["epochs_run"] == decided
    assert training["time_cap"]["epochs_decided"] == decided
    # From scratch (warm start was on, with nothing to start from): the repeat must not
    # start from the model this run blessed, wherever it runs.
    assert training["repeat_with"] == ["--epochs", str(decided), "--time-budget", "none",
                                       "--warm-start", "off"]
    assert (f"repeat    add {' '.join(training['repeat_with'])} to this command to train "
            "the same again") in stdout

    repeated, _ = _run(tmp_path / "repeated", *training["repeat_with"])
    again = repeated["training"]
    assert again["time_cap"] is None and again["epochs_run"] == again["epochs_decided"] == decided
    assert again["repeat_with"][:4] == ["--epochs", str(decided), "--time-budget", "none"]
    # The same training: the same accuracy to the last digit, because the same weights.
    assert repeated["eval"]["accuracy"] == budgeted["eval"]["accuracy"]
    assert repeated["eval"]["confusion_matrix"] == budgeted["eval"]["confusion_matrix"]
    first, second = _weights(budgeted), _weights(repeated)
    assert first.keys() == second.keys() and first
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
