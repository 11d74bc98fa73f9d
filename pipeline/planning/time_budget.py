"""--time-budget: a run's wall-time budget turned into the Trainer's training cap.

Pure: the cap is the budget minus what the other stages are expected to take
(rules.py's numbers). The Trainer re-sizes it from the run's own clock when its
fit starts, and turns it into epochs (modules/training/time_cap.py).
"""
from typing import Optional, Tuple

from modules.params import shortest_held
from pipeline.planning import rules


def other_stages_s(examples: Optional[int], tune_minutes: Optional[float]) -> float:
    """What a run spends outside the Trainer's fit: a fixed part, a part per image
    (ingestion, statistics, Transform, evaluation), and the Tuner's minutes."""
    images = examples if examples is not None else rules.BUDGET_UNKNOWN_EXAMPLES
    tuning = tune_minutes * 60 if tune_minutes else 0.0
    return rules.BUDGET_FIXED_S + rules.BUDGET_PER_IMAGE_S * images + tuning


def after_fit_s(others_s: float, tune_minutes: Optional[float]) -> float:
    """The part of `others_s` (other_stages_s) expected after the fit: the Tuner's minutes
    come before it."""
    tuning = tune_minutes * 60 if tune_minutes else 0.0
    return rules.BUDGET_AFTER_FIT_SHARE * (others_s - tuning)


def training_cap(budget_s: float, examples: Optional[int],
                 tune_minutes: Optional[float]) -> Tuple[float, str]:
    """(the Trainer's fit cap in seconds, why); ValueError if nothing is left for training."""
    others = other_stages_s(examples, tune_minutes)
    cap = budget_s - others
    if cap < rules.BUDGET_MIN_TRAINING_S:
        raise ValueError(
            f"{_text(budget_s)} leaves {_text(max(cap, 0))} for training after about "
            f"{_text(others)} for the other stages; give at least "
            f"{_text(others + rules.BUDGET_MIN_TRAINING_S)}")
    counted = f"{examples:,} images" if examples is not None else "an unknown image count"
    tuning = f" and --tune's {tune_minutes:g} min" if tune_minutes else ""
    why = (f"{_text(budget_s)} minus about {_text(others)} for the other stages "
           f"({rules.BUDGET_FIXED_S:g} s, plus {rules.BUDGET_PER_IMAGE_S * 1000:g} ms per "
           f"image for {counted}{tuning}); at the fit's start the Trainer re-sizes it from "
           "what the stages before it took; the learning rate holds its peak for "
           f"{rules.TIME_CAP_PROBE_EPOCHS} epochs (in every run), whose times decide how many "
           "fit, and then decays over those, as --epochs with --time-budget none would")
    return cap, why


def least_cap(budget: str, too_little: str) -> Tuple[float, str]:
    """(the least training cap, why) for a planned `budget` that training_cap found leaves
    `too_little` for training. A planned budget is never dropped, which would train a large
    dataset with no cap at all: it keeps this cap, so the run ends as soon as a budget can
    end it, later than the budget, and the plan says so."""
    cap = rules.BUDGET_MIN_TRAINING_S
    held = shortest_held(rules.TIME_CAP_PROBE_EPOCHS)
    return cap, (f"the default {budget} cannot fit this run: {too_little}. It is not "
                 f"dropped: it keeps the least training cap, {_text(cap)} (re-sized on the "
                 f"run's clock at the fit's start), so training stops after the fewest epochs "
                 f"a budget decides ({held}, or all when {held - 1} or fewer are planned) and "
                 f"the run ends as soon as it can, after more than {budget}; a larger "
                 "--time-budget trains more of them")


def _text(seconds: float) -> str:
    """'95 s', '10 min', '1 h 30 min'."""
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    parts = [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes or not hours)
    return " ".join(parts)
