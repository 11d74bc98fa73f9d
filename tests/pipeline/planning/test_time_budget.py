"""--time-budget in the plan: the training cap, why, and budgets refused before a run."""
import pytest

from settings.config import ConfigError, PipelineConfig
from core.errors import UsageError
from pipeline.planning import rules
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.model_source import ModelSource
from pipeline.planning.plan import make_plan, plan_lines
from pipeline.planning.time_budget import other_stages_s, training_cap

DIGITS = DataFacts(10, 800, 200, 28, 28, 28, 1)


def _plan(**flags):
    return make_plan(PipelineConfig.from_values(**flags), DIGITS, "cpu", 24 << 30)


def test_the_cap_is_the_budget_minus_the_other_stages():
    others = rules.BUDGET_FIXED_S + 1000 * rules.BUDGET_PER_IMAGE_S
    cap, why = training_cap(600, 1000, None)
    assert cap == pytest.approx(600 - others)
    assert why.startswith("10 min minus about") and "1,000 images" in why


def test_the_tuner_minutes_are_reserved_too():
    assert other_stages_s(1000, 5) == pytest.approx(other_stages_s(1000, None) + 300)


def test_a_budget_that_leaves_too_little_to_train_is_refused():
    with pytest.raises(ValueError, match="give at least"):
        training_cap(rules.BUDGET_FIXED_S, 1000, None)


def test_the_plan_carries_the_cap_to_the_trainer_and_says_why():
    plan = _plan(time_budget="10m")
    params = plan.trainer_params()
    assert params.train_cap_s == pytest.approx(plan.train_cap_s)
    assert params.hold_epochs == rules.TIME_CAP_PROBE_EPOCHS
    # The Trainer re-sizes the cap from the run's clock: it gets the estimates around it.
    assert params.before_fit_s + params.train_cap_s + params.after_fit_s == pytest.approx(600)
    assert params.after_fit_s == pytest.approx(
        rules.BUDGET_AFTER_FIT_SHARE * (600 - params.train_cap_s))
    line = next(line for line in plan_lines(plan) if "time budget" in line)
    assert f"training capped at {plan.train_cap_s:.0f} s" in line
    values = plan.to_json()["values"]
    assert (values["time_budget_s"], values["train_cap_s"]) == (600, round(plan.train_cap_s, 1))
    assert "time_budget" in plan.to_json()["reasons"]


def test_without_a_budget_nothing_is_capped_and_the_schedule_is_the_same():
    plan = _plan(time_budget="none")
    params = plan.trainer_params()
    # The same held peak as a budgeted run's: `--epochs k --time-budget none` repeats it.
    assert (params.train_cap_s, params.hold_epochs) == (None, rules.TIME_CAP_PROBE_EPOCHS)
    assert (params.before_fit_s, params.after_fit_s) == (None, None)
    assert not any("time budget" in line for line in plan_lines(plan))
    assert "train_cap_s" not in plan.to_json()["values"]


def test_a_run_on_this_machines_cpu_gets_a_budget_unless_told_otherwise():
    plan = _plan()
    assert plan.config.training.time_budget == rules.CPU_TIME_BUDGET and plan.train_cap_s > 0
    why = plan.reasons["time_budget"]
    assert why.startswith(f"{rules.CPU_TIME_BUDGET} on CPU") and "--time-budget none" in why
    assert plan.to_json()["values"]["time_budget_s"] == 540
    assert _plan(time_budget="20m").train_cap_s > plan.train_cap_s  # the user's wins


@pytest.mark.parametrize("flags, hardware, runs_here, why", [
    ({}, "gpu", True, "on gpu"),
    ({}, "cpu", False, "compiled for a cluster"),
    ({"train_steps": 100}, "cpu", True, "--train-steps"),
    ({"tune": True}, "cpu", True, "--tune"),
    ({"time_budget": "none"}, "cpu", True, "--time-budget none"),
    ({"model": "mobilenet_v2"}, "cpu", True, "a pretrained backbone"),
])
def test_no_budget_is_planned_where_it_does_not_belong(flags, hardware, runs_here, why):
    source = (ModelSource("backbone", "mobilenet_v2", weights="imagenet")
              if flags.get("model") else None)
    plan = make_plan(PipelineConfig.from_values(**flags), DIGITS, hardware, 24 << 30, source,
                     runs_here=runs_here)
    assert (plan.config.training.time_budget, plan.train_cap_s) == (None, None)
    assert why in plan.reasons["time_budget"]


def test_a_planned_budget_too_small_for_huge_data_keeps_its_least_cap_and_says_so():
    huge = DataFacts(10, 900_000, 100_000, 28, 28, 28, 1)
    plan = make_plan(PipelineConfig.from_values(epochs=20), huge, "cpu", 24 << 30)  # not refused
    assert plan.config.training.time_budget == rules.CPU_TIME_BUDGET
    assert plan.train_cap_s == rules.BUDGET_MIN_TRAINING_S  # kept, not dropped
    assert plan.trainer_params().train_cap_s == rules.BUDGET_MIN_TRAINING_S
    # The Trainer re-sizes it within the same 9 minutes.
    assert plan.before_fit_s + plan.train_cap_s + plan.after_fit_s == pytest.approx(540)
    why = plan.reasons["time_budget"]
    assert why.startswith(f"the default {rules.CPU_TIME_BUDGET} cannot fit this run: ")
    assert "the fewest epochs a budget decides (7, or all when 6 or fewer" in why
    # The console's plan says what the summary's reasons say.
    line = next(line for line in plan_lines(plan) if "time budget" in line)
    assert line == f"          time budget: training capped at 10 s: {why}"


def test_a_budget_too_small_for_the_other_stages_is_a_usage_error_naming_the_flag():
    with pytest.raises(UsageError, match="--time-budget 30s: .*give at least"):
        _plan(time_budget="30s")


@pytest.mark.parametrize("flags, words", [
    ({"time_budget": "abc"}, "--time-budget must be a duration"),
    ({"time_budget": "0"}, "--time-budget must be a duration"),
    ({"time_budget": "10m", "train_steps": 100}, "--train-steps asks for an exact step"),
    ({"time_budget": "10m", "workers": 2}, "needs --workers 1"),
])
def test_bad_budgets_are_refused_at_construction(flags, words):
    with pytest.raises(ConfigError, match=words):
        PipelineConfig.from_values(**flags)
