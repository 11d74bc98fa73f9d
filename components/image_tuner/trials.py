"""Every trial of a search, as rows, and which one the Trainer got: what summary.json's
`tuning` lists."""
import json
import os
from typing import Dict, List, Optional, Sequence

from core.storage import files

TRIALS_FILE = "trials.json"
CHOICE_FILE = "choice.json"  # modules/tuning/choice.py's verdict
# Each trial's per-image results on the holdout, what the choice compared: one character
# per held-out image, in the holdout's order, "1" right and "0" wrong.
HOLDOUT_FILE = "holdout_results.json"
# What TFX's Tuner executor writes into the HyperParameters artifact.
BEST_FILE = "best_hyperparameters.txt"


class NoTrialError(RuntimeError):
    """No trial completed: nothing to hand the Trainer."""

    def __init__(self, rows: List[dict]):
        reasons = sorted({row.get("message") or row["status"] for row in rows})
        super().__init__(f"the search completed none of its {len(rows)} trials: "
                         + "; ".join(reasons or ["no trial started"]))


def trial_rows(tuner) -> List[dict]:
    """One row per trial, in the order they ran: id, status, score, values, and for
    imagepipe's own tuner the epochs, seconds, why it stopped and whether it is the plan's."""
    records = getattr(tuner, "records", {})
    rows = []
    for trial_id, trial in sorted(tuner.oracle.trials.items()):
        rows.append({"trial_id": trial_id, "status": str(trial.status),
                     "score": None if trial.score is None else float(trial.score),
                     "values": dict(trial.hyperparameters.values),
                     **records.get(trial_id, {}),
                     **({"message": trial.message.strip().splitlines()[-1]}
                        if trial.message and trial.message.strip() else {})})
    return rows


def write_trials(folder: str, rows: List[dict], choice: Optional[dict] = None,
                 holdout_results: Optional[Dict[str, Sequence]] = None) -> None:
    """The rows, and the search's choice and the per-image holdout results it compared,
    where it made one (a module's own tuner does not)."""
    files.write_text(os.path.join(folder, TRIALS_FILE), json.dumps(rows, indent=2))
    if choice is not None:
        files.write_text(os.path.join(folder, CHOICE_FILE), json.dumps(choice, indent=2))
    if holdout_results:
        encoded = {trial_id: "".join("1" if right else "0" for right in correct)
                   for trial_id, correct in holdout_results.items()}
        files.write_text(os.path.join(folder, HOLDOUT_FILE), json.dumps(encoded, indent=2))


def read_holdout_results(folder: str) -> Dict[str, List[bool]]:
    """Each trial's per-image holdout results (True: right) as write_trials wrote them, by
    trial id in the order the trials ran: what modules/tuning/choice.py's `choose` reads;
    {} when absent."""
    path = os.path.join(folder, HOLDOUT_FILE)
    if not files.exists(path):
        return {}
    return {trial_id: [char == "1" for char in encoded]
            for trial_id, encoded in json.loads(files.read_text(path)).items()}


def read_trials(folder: str) -> List[dict]:
    """The rows write_trials wrote; [] when absent."""
    path = os.path.join(folder, TRIALS_FILE)
    if not files.exists(path):
        return []
    return json.loads(files.read_text(path))


def read_choice(folder: str) -> Optional[dict]:
    """The choice write_trials wrote; None when absent."""
    path = os.path.join(folder, CHOICE_FILE)
    return json.loads(files.read_text(path)) if files.exists(path) else None


def read_best(folder: str) -> dict:
    """The best trial's values from the HyperParameters artifact; {} when absent."""
    path = os.path.join(folder, BEST_FILE)
    if not files.exists(path):
        return {}
    return json.loads(files.read_text(path)).get("values", {})


def tuning_summary(best_folder: str, results_folder: str, trained_with: dict) -> dict:
    """summary.json's `tuning`: every trial, the values handed on and why (`choice`), and
    those the Trainer used."""
    rows = read_trials(results_folder)
    return {"trials": rows, "best": read_best(best_folder), "trained_with": trained_with,
            "choice": read_choice(results_folder),
            "stopped_early": sum(1 for row in rows if row.get("stopped"))}
