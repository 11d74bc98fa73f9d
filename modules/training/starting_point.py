"""Where a training starts: from the base model (warm start) or from scratch, and for how long."""
import dataclasses
import math
import os

from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py

from modules.training import warm_start
from modules.params import TrainerParams
from modules.schedule import Schedule


def warm_start_decision(fn_args: FnArgs, params: TrainerParams, description: dict,
                        schedule: Schedule):
    """Whether to start from the base model (FnArgs.base_model: the last blessed one, or on
    KFP and Vertex the served version's copy, which may be empty and say why), and the
    schedule: `warm_start_share` of its epochs when warm, unless --train-steps asked for
    an exact step count."""
    if not params.warm_start:
        return warm_start.Decision(None, False, "--warm-start off"), schedule
    decision = warm_start.decide(fn_args.base_model, description)
    if decision.warm and not params.train_steps:
        epochs = max(1, math.ceil(schedule.epochs * params.warm_start_share))
        schedule = dataclasses.replace(schedule, epochs=epochs)
    return decision, schedule


def warm_start_record(model, decision, epochs: int, planned: int) -> dict:
    """Loads the base model's weights if warm; fit_stats' `warm_start` entry either way,
    with the pushed `version` it started from when the base model names one."""
    if not decision.warm:
        print(f"          warm start: no, {decision.reason}; training from scratch",
              flush=True)
        return {"from": None, "reason": decision.reason}
    loaded = warm_start.load(model, decision)
    source = os.path.dirname(decision.source)
    pushed = {} if decision.version is None else {"version": decision.version}
    named = source if decision.version is None else f"version {decision.version} ({source})"
    print(f"          warm start: from {named} ({decision.reason}), {loaded} layers loaded, "
          f"{epochs} epochs instead of {planned}", flush=True)
    return {"from": source, **pushed, "reason": decision.reason,
            "new_head": decision.new_head, "layers_loaded": loaded, "epochs": epochs,
            "planned_epochs": planned}
