"""`imagepipe run --tune` end to end on the bundled digits: search, then train the plan's
settings or a trial that beats them."""
import json

import pytest

from modules.training.warm_start import INFO_FILE, WARM_START_DIR
from tests.support.cli import imagepipe, read_summary

pytestmark = pytest.mark.slow

TRIALS = 6


def _architecture(output) -> dict:
    """What the Trainer built: the searched shape it saved beside its model."""
    found = list((output / "tfx" / "Trainer").rglob(f"{WARM_START_DIR}/{INFO_FILE}"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())["architecture"]


def test_the_trainer_trains_the_chosen_trial_and_a_rerun_searches_nothing(tmp_path):
    output = tmp_path / "out"
    # Fewer epochs than planned, so the test stays short: trials train half of them.
    flags = ["--output", str(output), "--tune", "--tune-trials", str(TRIALS),
             "--epochs", "4", "--accuracy-threshold", "0.5", "--quantize", "none"]
    stdout = imagepipe("run", *flags, check=True).stdout
    summary = read_summary(output)
    tuning = summary["tuning"]
    assert 1 <= len(tuning["trials"]) <= TRIALS
    assert all(row["status"] == "COMPLETED" and 0 <= row["score"] <= 1
               for row in tuning["trials"])
    assert tuning["trials"][0]["plan"] and tuning["trials"][0]["values"] == {}
    choice = tuning["choice"]
    chosen = next(row for row in tuning["trials"] if row["trial_id"] == choice["trained"])
    assert choice["plan_won"] == (chosen["trial_id"] == "0")
    # the plan's settings travel as no values: the Trainer trains as without --tune
    assert tuning["best"] == chosen["values"] == (tuning["trained_with"] or {})
    assert (summary["training"]["hyperparameters"] or {}) == chosen["values"]
    built = _architecture(output) or {"width": 1.0, "depth": 0}  # None: the planned shape
    assert (built["width"], built["depth"]) == (chosen["values"].get("width", 1.0),
                                                chosen["values"].get("depth", 0))
    assert ("tuned: " in stdout) == bool(chosen["values"])
    assert f"tuned     {len(tuning['trials'])} trials" in stdout
    assert ("kept the plan's settings" in stdout) == choice["plan_won"]
    assert summary["timings_s"]["Tuner"] < 30 * 60
    assert summary["pushed"]["serving"]
    imagepipe("run", *flags, check=True)
    cached = read_summary(output)["cached"]
    assert "Tuner" in cached and "Trainer" in cached
