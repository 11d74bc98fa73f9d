"""Which settings the Trainer gets from a search: the plan's own (trial 0) unless a trial
is right on significantly more of the same held-out images than the plan's trial.

A search's best score is the largest of several noisy ones: on 159 held-out
digits a trial that scored one image more than the plan trained a model that
did worse on the eval split (0.9557 against 0.9704), and with five rivals as
good as the plan the best of them beats it by some images in most searches.
So each rival is compared with the plan's trial image by image (McNemar's
exact test, one-sided in the rival's favour), and the rivals' p-values are
Holm-adjusted for their number (significance.py): an equally good rival
replaces the plan in at most ALPHA of searches. Of the rivals whose adjusted
p-value is at most ALPHA the Trainer gets the most accurate on the holdout
(then the smallest p-value, then the earliest).

The plan's trial trains all the Trainer's epochs, the others their share of
them (search.py): each rival is compared as it was trained with the plan's
settings as the Trainer would train them, a bias towards the plan.

Light on purpose (no TensorFlow): the search, the executor and the run's
summary read it.
"""
from typing import Dict, List, Optional, Sequence, Tuple

from core.limits import as_float, ratio
from modules.tuning.significance import ALPHA, TEST, holm, mcnemar_p, significant


def paired_counts(plan: Sequence, rival: Sequence) -> Tuple[int, int]:
    """(gained, lost): the images the rival gets right and the plan wrong, and the
    images the plan gets right and the rival wrong, from per-image results (truthy:
    right) in the same holdout order."""
    if len(plan) != len(rival):
        raise ValueError(f"per-image results of different holdouts: {len(plan)} images "
                         f"for the plan's trial, {len(rival)} for a rival")
    gained = sum(1 for mine, theirs in zip(plan, rival) if theirs and not mine)
    lost = sum(1 for mine, theirs in zip(plan, rival) if mine and not theirs)
    return gained, lost


def compare(results: Dict[str, Sequence], plan_trial: str) -> List[dict]:
    """Every other trial against the plan's, in the order given: its `trial_id`, holdout
    `score`, `gained` and `lost` images, McNemar's `p_value` and Holm's `p_holm` (exact
    fractions)."""
    plan = results[plan_trial]
    rows = []
    for trial_id, correct in results.items():
        if trial_id != plan_trial:
            gained, lost = paired_counts(plan, correct)
            rows.append({"trial_id": trial_id, "score": _score(correct), "gained": gained,
                         "lost": lost, "p_value": mcnemar_p(gained, lost)})
    adjusted = holm({row["trial_id"]: row["p_value"] for row in rows})
    return [{**row, "p_holm": adjusted[row["trial_id"]]} for row in rows]


def choose(results: Dict[str, Sequence], plan_trial: Optional[str]) -> dict:
    """The search's verdict, as summary.json's `tuning.choice` records it.

    Args:
        results: every completed trial's per-image results on the holdout (truthy where
            it classified the image right), by trial id, in the order the trials ran.
        plan_trial: the id of the trial run with the plan's own settings; None when the
            search has no such trial.

    Returns:
        `test` and `alpha`; `trained` (the id of the trial whose settings the Trainer
        gets); `plan_won`; `plan_trial` and `plan_score`; `best_trial` and `best_score`
        (the rival that won, else the most accurate rival, the earliest of equals);
        `p_value`, best_trial's Holm-adjusted p-value; `rivals`, every rival's
        comparison (compare's, p-values as floats); `holdout_images`. None where
        there is no such trial or value.
    """
    if not results:
        raise ValueError("no trial has per-image holdout results to choose from")
    if plan_trial not in results:  # the plan's trial did not complete: the best trial
        best = max(results, key=lambda key: _score(results[key]))
        return _verdict(results, plan_trial, best, [], plan_won=False)
    rows = compare(results, plan_trial)
    winners = [row for row in rows if significant(row["p_holm"])]
    if winners:  # max() keeps the earliest of equals
        best = max(winners, key=lambda row: (row["score"], -row["p_holm"]))["trial_id"]
    else:
        best = max(rows, key=lambda row: row["score"])["trial_id"] if rows else None
    return _verdict(results, plan_trial, best, rows, plan_won=not winners)


def _score(correct: Sequence) -> float:
    return as_float(ratio(sum(1 for right in correct if right), len(correct)))


def _verdict(results: Dict[str, Sequence], plan_trial: Optional[str], best: Optional[str],
             rows: List[dict], plan_won: bool) -> dict:
    found = {row["trial_id"]: row for row in rows}
    return {"test": TEST, "alpha": ALPHA, "trained": plan_trial if plan_won else best,
            "plan_won": plan_won, "plan_trial": plan_trial,
            "plan_score": _score(results[plan_trial]) if plan_trial in results else None,
            "best_trial": best, "best_score": None if best is None else _score(results[best]),
            "p_value": as_float(found[best]["p_holm"]) if best in found else None,
            "rivals": [{**row, "p_value": as_float(row["p_value"]),
                        "p_holm": as_float(row["p_holm"])} for row in rows],
            "holdout_images": len(next(iter(results.values())))}


def describe(choice: dict) -> str:
    """One line for the log and the run's summary: which settings won, and the test's
    p-value against its alpha."""
    if choice["best_trial"] is None:
        return (f"kept the plan's settings (trial {choice['plan_trial']}): "
                "no other trial completed")
    if choice["plan_score"] is None:
        return f"trained trial {choice['trained']}: the plan's own trial did not complete"
    if "test" not in choice:  # a choice.json from before the paired test (a cached Tuner)
        return _describe_margin(choice)
    rival = next(row for row in choice["rivals"] if row["trial_id"] == choice["best_trial"])
    test = (f"McNemar's exact test, Holm-adjusted over {len(choice['rivals'])} "
            f"rival{'s' if len(choice['rivals']) > 1 else ''}: p = {choice['p_value']:.4g} "
            f"{'>' if choice['plan_won'] else '<='} alpha {choice['alpha']:g}")
    counts = (f"right on {rival['gained']} held-out images the plan got wrong and wrong on "
              f"{rival['lost']} it got right (of {choice['holdout_images']})")
    if choice["plan_won"]:
        return (f"kept the plan's settings (trial {choice['plan_trial']}, holdout "
                f"{choice['plan_score']:.4f}): the best other, trial {choice['best_trial']} "
                f"({choice['best_score']:.4f}), is {counts}; {test}")
    return (f"trained trial {choice['best_trial']} (holdout {choice['best_score']:.4f}): "
            f"against the plan's trial {choice['plan_trial']} ({choice['plan_score']:.4f}) "
            f"it is {counts}; {test}")


def _describe_margin(choice: dict) -> str:
    """The line of the margin rule that preceded the paired test."""
    need = (f"where {choice['holdout_images']} held-out images require more than "
            f"{choice['margin_required']:+.4f}")
    if choice["plan_won"]:
        return (f"kept the plan's settings (trial {choice['plan_trial']}, holdout "
                f"{choice['plan_score']:.4f}): the best other, trial {choice['best_trial']} "
                f"({choice['best_score']:.4f}), is {choice['margin']:+.4f} from it, {need}")
    return (f"trained trial {choice['best_trial']} (holdout {choice['best_score']:.4f}): "
            f"{choice['margin']:+.4f} over the plan's {choice['plan_score']:.4f} (trial "
            f"{choice['plan_trial']}), {need}")
