"""`imagepipe run --tune` end to end on the bundled digits: search, then train the best."""
import json

import pytest

from modules.continuous.warm_start import INFO_FILE, WARM_START_DIR
from tests.test_e2e_models import _run

pytestmark = pytest.mark.slow

TRIALS = 6


def _architecture(output) -> dict:
    """What the Trainer built: the searched shape it saved beside its model."""
    found = list((output / "tfx" / "Trainer").rglob(f"{WARM_START_DIR}/{INFO_FILE}"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())["architecture"]


def test_the_trainer_trains_the_best_trial_and_a_rerun_searches_nothing(tmp_path):
    output = tmp_path / "out"
    # Fewer epochs than planned, so the test stays short: trials train half of them.
    flags = ["--output", str(output), "--tune", "--tune-trials", str(TRIALS),
             "--epochs", "4", "--accuracy-threshold", "0.5", "--quantize", "none"]
    stdout = _run(*flags)
    summary = json.loads((output / "summary.json").read_text())
    tuning = summary["tuning"]
    assert 1 <= len(tuning["trials"]) <= TRIALS
    assert all(row["status"] == "COMPLETED" and 0 <= row["score"] <= 1
               for row in tuning["trials"])
    best = max(tuning["trials"], key=lambda row: row["score"])
    assert tuning["best"] == best["values"] == tuning["trained_with"]
    assert summary["training"]["hyperparameters"] == best["values"]
    built = _architecture(output)
    assert (built["width"], built["depth"]) == (best["values"]["width"],
                                                best["values"]["depth"])
    assert "tuned: " in stdout and f"tuned     {len(tuning['trials'])} trials" in stdout
    assert summary["timings_s"]["Tuner"] < 30 * 60
    assert summary["pushed"]["serving"]
    _run(*flags)
    cached = json.loads((output / "summary.json").read_text())["cached"]
    assert "Tuner" in cached and "Trainer" in cached
