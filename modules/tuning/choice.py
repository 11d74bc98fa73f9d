"""Which settings the Trainer gets from a search: the plan's own (trial 0) unless a trial
beats them on the holdout by more than that holdout's size leaves to chance.

A search's best score is the largest of several noisy ones: on 159 held-out
digits a trial that scored one image more than the plan trained a model that
did worse on the eval split (0.9557 against 0.9704). So a trial wins only by
more than MARGIN_STANDARD_ERRORS standard errors of the difference between
its accuracy and the plan's. The standard error is that of two independent
proportions: both are scored on the same images, and two models mostly right
on the same images differ less than independent ones would, so the bar is on
the safe side. Each accuracy is first moved towards 1/2 by one right and one
wrong answer (Agresti and Caffo, "Simple and effective confidence intervals
for proportions and differences of proportions", The American Statistician,
2000): without it a plan that scored 100% would have a standard error of 0,
and any trial that tied it on a few images would look certain.

Light on purpose (no TensorFlow): the search, the executor and the run's
summary read it.
"""
import math
from typing import Dict, Optional

MARGIN_STANDARD_ERRORS = 1.0


def required_margin(plan_score: float, trial_score: float, holdout_images: int) -> float:
    """How much more than `plan_score` a trial's accuracy must be, both on the same
    `holdout_images` images, for the Trainer to take the trial's settings."""
    n = holdout_images
    shrunk = [(score * n + 1) / (n + 2) for score in (plan_score, trial_score)]
    variance = sum(p * (1 - p) for p in shrunk) / (n + 2)
    return MARGIN_STANDARD_ERRORS * math.sqrt(variance)


def choose(scores: Dict[str, float], plan_trial: Optional[str], holdout_images: int) -> dict:
    """The search's verdict, as summary.json's `tuning.choice` records it.

    Args:
        scores: the holdout accuracy of every completed trial, by trial id, in order.
        plan_trial: the id of the trial run with the plan's own settings; None when
            the search has no such trial.
        holdout_images: how many images every trial was scored on.

    Returns:
        `trained` (the id of the trial whose settings the Trainer gets), `plan_won`,
        the plan's and the best other trial's ids and scores, the `margin` that trial
        achieved over the plan and the `margin_required`; None where there is no such
        trial or score.
    """
    scores = {key: float(score) for key, score in scores.items()}  # KerasTuner's: numpy
    plan_score = scores.get(plan_trial) if plan_trial is not None else None
    others = {key: score for key, score in scores.items() if key != plan_trial}
    best = max(others, key=others.get) if others else None  # the earliest of equals
    margin = required = None
    if best is not None and plan_score is not None:
        margin = others[best] - plan_score
        required = required_margin(plan_score, others[best], holdout_images)
    plan_won = plan_score is not None and (best is None or margin <= required)
    return {"trained": plan_trial if plan_won else best, "plan_won": plan_won,
            "plan_trial": plan_trial, "plan_score": plan_score, "best_trial": best,
            "best_score": None if best is None else others[best],
            "margin": margin, "margin_required": required, "holdout_images": holdout_images}


def describe(choice: dict) -> str:
    """One line for the log and the run's summary: which settings won, and by how much."""
    if choice["best_trial"] is None:
        return (f"kept the plan's settings (trial {choice['plan_trial']}): "
                "no other trial completed")
    if choice["plan_score"] is None:
        return f"trained trial {choice['trained']}: the plan's own trial did not complete"
    need = (f"where {choice['holdout_images']} held-out images require more than "
            f"{choice['margin_required']:+.4f}")
    if choice["plan_won"]:
        return (f"kept the plan's settings (trial {choice['plan_trial']}, holdout "
                f"{choice['plan_score']:.4f}): the best other, trial {choice['best_trial']} "
                f"({choice['best_score']:.4f}), is {choice['margin']:+.4f} from it, {need}")
    return (f"trained trial {choice['best_trial']} (holdout {choice['best_score']:.4f}): "
            f"{choice['margin']:+.4f} over the plan's {choice['plan_score']:.4f} (trial "
            f"{choice['plan_trial']}), {need}")
