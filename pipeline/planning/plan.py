"""The training plan: every setting the user left unset, chosen from the data and hardware.

    imagepipe plan --data ~/photos       # prints the plan; trains nothing

`make_plan` is pure: (config, data facts, hardware) -> a Plan whose config has
every planned field filled, and a reason for each. A flag the user gave is
never changed; its reason says so. The rules' numbers live in
pipeline/planning/rules.py, each network's own defaults in its entry of
modules/network_registry.py.
"""
import dataclasses
from typing import Dict, List, Optional, Tuple

from core.durations import parse_duration
from modules import network_registry
from modules.network_registry import PlanDefaults, SideRule, SmallSetRule
from modules.params import (MODULE, WARP_ZOOM, TrainerParams, TransformParams, epochs_for,
                            head_epochs, steps_per_epoch)
from modules.tuning.settings import TuningParams, planned_holdout
from modules.tuning.significance import rule_line
from modules.networks.space import searched
from settings.config import NO_BUDGET, PLANNED, PipelineConfig
from core.errors import UsageError
from pipeline.planning.data_facts import DataFacts
from pipeline.planning import rules
from pipeline.planning.model_source import NO_WEIGHTS, ModelSource
from pipeline.planning.time_budget import after_fit_s, least_cap, training_cap


@dataclasses.dataclass(frozen=True)
class Plan:
    """A resolved config, why each planned value was chosen, and what it was chosen from."""

    config: PipelineConfig
    reasons: Dict[str, str]
    facts: DataFacts
    hardware: str  # "cpu", "gpu" or "tpu"
    cache_bytes: int
    source: ModelSource = ModelSource("builtin", None)
    # The Trainer's decode cache on a local run (the state folder's); None on a cluster.
    decode_cache_root: Optional[str] = None
    # --time-budget: the Trainer's fit cap in seconds (time_budget.py); None: no budget.
    train_cap_s: Optional[float] = None
    # ... and what the plan expects the run to spend before the fit and after it.
    before_fit_s: Optional[float] = None
    after_fit_s: Optional[float] = None

    @property
    def fine_tunes(self) -> bool:
        """A pretrained backbone: head first, then the top blocks."""
        return self.source.kind == "backbone" and self.source.weights != NO_WEIGHTS

    @property
    def steps_per_execution(self) -> int:
        """The flag's, raised under parameter servers (rules.PS_STEPS_PER_EXECUTION)."""
        c = self.config
        return max(c.training.steps_per_execution,
                   rules.PS_STEPS_PER_EXECUTION if c.cluster.ps else 1)

    def trainer_params(self) -> TrainerParams:
        """The Trainer's typed settings (its custom_config): the config's fields of the
        same name, and what the plan derives."""
        c, s = self.config, self.source
        return c.settings_for(
            TrainerParams, epochs=None if c.training.train_steps else c.training.epochs,
            warmup_epochs=rules.WARMUP_EPOCHS, cache_bytes=self.cache_bytes,
            examples_budget=rules.EXAMPLES_BUDGET, min_epochs=rules.MIN_EPOCHS,
            max_epochs=rules.MAX_EPOCHS, disk_headroom=rules.DISK_HEADROOM,
            rendezvous_s=rules.RENDEZVOUS_S, steps_per_execution=self.steps_per_execution,
            weights=None if s.weights in (None, NO_WEIGHTS) else s.weights,
            weights_sha256=s.weights_sha256,
            head_share=rules.FINE_TUNE_HEAD_SHARE if self.fine_tunes else 1.0,
            fine_tune_lr_factor=rules.FINE_TUNE_LR_FACTOR if self.fine_tunes else 1.0,
            module_file=s.path, module_source=s.text, module_sha256=s.sha256,
            cache_root=self.decode_cache_root, warm_start=c.training.warm_start == "on",
            warm_start_share=rules.WARM_START_EPOCH_SHARE,
            imbalance_ratio=rules.IMBALANCE_RATIO, train_cap_s=self.train_cap_s,
            hold_epochs=rules.TIME_CAP_PROBE_EPOCHS,  # every run: one schedule, budget or not
            before_fit_s=self.before_fit_s, after_fit_s=self.after_fit_s,
            hyperparameters=None)  # the Trainer's, from the Tuner's artifact

    def tuning_params(self) -> TuningParams:
        """The Tuner's typed settings (beside the Trainer's in its custom_config)."""
        c = self.config
        return TuningParams(
            trials=c.tuning.trials, minutes=c.tuning.minutes, epoch_share=rules.TUNE_EPOCH_SHARE,
            holdout_share=rules.TUNE_HOLDOUT_SHARE, max_examples=rules.TUNE_MAX_EXAMPLES,
            max_bytes=rules.TUNE_MAX_BYTES,
            initial_points=max(2, round(c.tuning.trials * rules.TUNE_RANDOM_SHARE)))

    def transform_params(self) -> TransformParams:
        """Transform's typed settings (its custom_config)."""
        return self.config.settings_for(TransformParams)

    def to_json(self) -> dict:
        """summary.json's `plan`: each planned value, and why."""
        given = self.config.flat()
        values = {name: given[name] for name in PLANNED}
        values.update(train_steps=self.config.training.train_steps, hardware=self.hardware,
                      workers=self.config.cluster.workers, ps=self.config.cluster.ps,
                      steps_per_execution=self.steps_per_execution,
                      steps_per_epoch=self.steps_per_epoch(), cache_bytes=self.cache_bytes,
                      warmup_epochs=rules.WARMUP_EPOCHS, schedule="warmup, then cosine",
                      warm_start=self.config.training.warm_start,
                      warm_start_epoch_share=rules.WARM_START_EPOCH_SHARE)
        if self.train_cap_s is not None:
            values.update(time_budget_s=parse_duration(self.config.training.time_budget),
                          train_cap_s=round(self.train_cap_s, 1),
                          before_fit_s=round(self.before_fit_s, 1),
                          after_fit_s=round(self.after_fit_s, 1))
        if self.config.tuning.enabled:
            values["tuning"] = dataclasses.asdict(self.tuning_params())
        if self.fine_tunes and self.config.training.epochs:
            head = head_epochs(self.config.training.epochs, rules.FINE_TUNE_HEAD_SHARE)
            values["phases"] = {"head_epochs": head,
                                "fine_tune_epochs": self.config.training.epochs - head,
                                "fine_tune_learning_rate": self.fine_tune_learning_rate}
        return {"values": values, "reasons": dict(self.reasons),
                "data": dataclasses.asdict(self.facts)}

    @property
    def fine_tune_learning_rate(self) -> float:
        return self.config.training.learning_rate * rules.FINE_TUNE_LR_FACTOR

    def steps_per_epoch(self) -> Optional[int]:
        """Steps in one epoch on one replica, when the train split's size is known."""
        n = self.facts.train_examples
        return steps_per_epoch(n, self.config.training.batch_size) if n else None


def _given(config: PipelineConfig, name: str) -> bool:
    return config.flat()[name] is not None


def _choose_model(config: PipelineConfig, facts: DataFacts, channels: int):
    if config.model.module_file:
        return MODULE, f"your module file's build_model ({config.model.module_file})"
    if _given(config, "model"):
        return config.model.network, "given (--model)"
    return _builtin_for(facts, channels)


def _builtin_for(facts: DataFacts, channels: int):
    """The built-in model for this data (a module file takes its training defaults)."""
    if channels == 1 and facts.side <= rules.CNN_MAX_SIDE:
        return "cnn", (f"small grayscale images ({facts.side} px): the Cloud TPU MNIST "
                       "example's CNN")
    kind = "RGB" if channels == 3 else f"large ({facts.side} px) grayscale"
    return "photo", (f"{kind} images: the photo model (inverted residuals, global pooling; "
                     "its weights do not grow with the image)")


def _defaults_of(model: str, facts: DataFacts, channels: int) -> Tuple[str, PlanDefaults]:
    """(network, its PlanDefaults in modules/network_registry.py): a module file takes
    those of the network the data would get."""
    network = _builtin_for(facts, channels)[0] if model == MODULE else model
    return network, network_registry.NETWORKS[network].plan


def _choose_size(config: PipelineConfig, facts: DataFacts, network: str, rule: SideRule,
                 hardware: str):
    if _given(config, "image_size"):
        return config.model.image_size, "given (--image-size)"
    cap = rule.cap[hardware]
    size = max(rule.multiple, min(cap, facts.side) // rule.multiple * rule.multiple)
    why = rule.kept if rule.kept and size == facts.side else rule.why
    return size, why.format(model=network, hardware=hardware.upper(), cap=cap, size=size,
                            side=facts.side, median=facts.side_median, largest=facts.side_max)


# Hashed split sizes are the path hash's; ingestion then moves each copy to its duplicate
# group's split, which the plan cannot know without decoding every image.
_HASHED = " by path hash (ingestion then moves copies to their group's split)"


def _choose_epochs(config: PipelineConfig, facts: DataFacts, fine_tunes: bool):
    if _given(config, "train_steps"):
        return None, f"--train-steps {config.training.train_steps} given: exactly that many steps"
    if _given(config, "epochs"):
        return config.training.epochs, "given (--epochs)"
    if facts.train_examples is None:
        return None, "from the train split's size once ingested (TFRecords are counted then)"
    epochs = epochs_for(facts.train_examples, rules.EXAMPLES_BUDGET, rules.MIN_EPOCHS,
                        rules.MAX_EPOCHS)
    why = (f"{facts.train_examples:,} train images{_HASHED * facts.hashed_split}: about "
           f"{rules.EXAMPLES_BUDGET:,} examples in all, within "
           f"{rules.MIN_EPOCHS}-{rules.MAX_EPOCHS} epochs")
    if fine_tunes and epochs > rules.FINE_TUNE_MAX_EPOCHS:
        return rules.FINE_TUNE_MAX_EPOCHS, (f"{why}; pretrained features need fewer: "
                                            f"at most {rules.FINE_TUNE_MAX_EPOCHS}")
    return epochs, why


def _small_set_rules(config: PipelineConfig, facts: DataFacts, rule: SmallSetRule,
                     values: dict, reasons: Dict[str, str]) -> None:
    """A network's rules by train split size (the cnn's): on a small set, a warp (or
    pad-and-crop) and a narrower network; on a large one, neither."""
    train = facts.train_examples
    if train is None:
        return
    facts_of = {"train": train, "max_train": rule.max_train, "width": rule.width}
    if train > rule.max_train:
        for name, value in (("augment_crop", 0), ("augment_rotate", 0.0)):
            if not _given(config, name):
                values[name], reasons[name] = value, rule.large_why.format(**facts_of)
        return
    if _given(config, "model_width"):
        return
    values["model_width"], reasons["model_width"] = rule.width, rule.small_why.format(**facts_of)


def _test_flip_rules(config: PipelineConfig, source: ModelSource, values: dict,
                     reasons: Dict[str, str]) -> None:
    """No test-time flip unless asked where training has no flips (mirror images are then
    not the same class), nor for a module file's own network (its serving cost)."""
    if _given(config, "test_flip") or not values["test_flip"]:
        return
    if not values["augment_flip"]:
        values["test_flip"], reasons["test_flip"] = False, (
            "off: training has no flips, so a mirror image is not the same picture")
    elif source.kind == "module_file":
        values["test_flip"], reasons["test_flip"] = False, (
            "off: the module file's own model (--test-flip turns it on)")


def _choose_batch(config: PipelineConfig, facts: DataFacts):
    if _given(config, "batch_size"):
        return config.training.batch_size, "given (--batch-size)"
    # An exact --train-steps keeps the full batch: "N steps of 64" stays so.
    train = None if _given(config, "train_steps") else facts.train_examples
    for batch in rules.BATCH_SIZES:
        if train is None or train // batch >= rules.MIN_STEPS_PER_EPOCH:
            break
    if train is None or batch == rules.BATCH_SIZES[0]:
        return batch, f"{batch} per replica (a multiple of 8, as TPUs need)"
    return batch, (f"{batch} per replica: at least {rules.MIN_STEPS_PER_EPOCH} steps an "
                   f"epoch where possible on {train:,} train images (a multiple of 8)")


def make_plan(config: PipelineConfig, facts: DataFacts, hardware: str,
              memory_limit: int, source: Optional[ModelSource] = None,
              runs_here: bool = True) -> Plan:
    """Fills every planned field the user left unset; see the module docstring.

    `source` is pipeline.planning.model_source.read_source(config) (file I/O, done before).
    `runs_here`: the run is on this machine (the local runner), not compiled for a
    cluster, where no default time budget applies.
    """
    reasons, values = {}, {}
    source = source or ModelSource("builtin", config.model.network)
    fine_tunes = source.kind == "backbone" and source.weights != NO_WEIGHTS
    values["channels"], reasons["channels"] = (
        (config.model.channels, "given (--channels)") if _given(config, "channels") else
        (facts.channels, f"what most sampled images have ({facts.channels})"))
    values["model"], reasons["model"] = _choose_model(config, facts, values["channels"])
    values["model_width"], reasons["model_width"] = (
        (config.model.width, "given (--model-width)") if _given(config, "model_width") else
        (1.0, "1: the network as designed"))
    network, defaults = _defaults_of(values["model"], facts, values["channels"])
    values["image_size"], reasons["image_size"] = _choose_size(config, facts, network,
                                                               defaults.side, hardware)
    values["epochs"], reasons["epochs"] = _choose_epochs(config, facts, fine_tunes)
    values["batch_size"], reasons["batch_size"] = _choose_batch(config, facts)
    for name, (value, why) in defaults.settings_for(fine_tunes).items():
        if _given(config, name):
            values[name], reasons[name] = config.flat()[name], f"given (--{_flag(name)})"
        else:
            values[name], reasons[name] = value, why
    if defaults.small_set:
        _small_set_rules(config, facts, defaults.small_set, values, reasons)
    _test_flip_rules(config, source, values, reasons)
    resolved = config.replace(**values)
    cache = min(rules.DECODE_CACHE_BYTES, memory_limit // rules.DECODE_CACHE_SHARE)
    if source.kind == "builtin":
        source = dataclasses.replace(source, name=values["model"])
    resolved = resolved.replace(time_budget=_choose_budget(config, hardware, runs_here,
                                                           fine_tunes, reasons))
    cap = _time_cap(resolved, facts, reasons)
    if cap is None:
        resolved = resolved.replace(time_budget=None)
        return Plan(resolved, reasons, facts, hardware, cache, source)
    others = parse_duration(resolved.training.time_budget) - cap
    after = after_fit_s(others, resolved.tuning.minutes if resolved.tuning.enabled else None)
    return Plan(resolved, reasons, facts, hardware, cache, source, train_cap_s=cap,
                before_fit_s=others - after, after_fit_s=after)


def _choose_budget(config: PipelineConfig, hardware: str, runs_here: bool, fine_tunes: bool,
                   reasons: Dict[str, str]) -> Optional[str]:
    """--time-budget as given, or planned: rules.CPU_TIME_BUDGET for a run on this machine's
    CPU, where the same run's time varies most with the host; None: no budget."""
    if config.training.time_budget == NO_BUDGET:
        reasons["time_budget"] = "none (--time-budget none): every planned epoch trains"
        return None
    if config.training.time_budget is not None:
        return config.training.time_budget
    blockers = [why for blocked, why in (
        (not runs_here, "compiled for a cluster"), (hardware != "cpu", f"on {hardware}"),
        (config.training.train_steps is not None, "--train-steps asks for exact steps"),
        (config.cluster.workers > 1 or config.cluster.ps, "several workers"),
        (config.tuning.enabled, "--tune has its own time limit"),
        # Its two phases are timed on a throwaway copy first (modules/training/time_cap.py),
        # which every default run would pay; its epochs are few already.
        (fine_tunes, f"a pretrained backbone trains at most {rules.FINE_TUNE_MAX_EPOCHS} "
                     "epochs")) if blocked]
    if blockers:
        reasons["time_budget"] = f"none: {blockers[0]}"
        return None
    reasons["time_budget"] = (
        f"{rules.CPU_TIME_BUDGET} on CPU, so that a default run ends within "
        f"{rules.CPU_TIME_BUDGET_ENDS_WITHIN} on a slow host too; --time-budget none "
        "trains every planned epoch")
    return rules.CPU_TIME_BUDGET


def _time_cap(config: PipelineConfig, facts: DataFacts, reasons: Dict[str, str]):
    """--time-budget's training cap in seconds (its reason into `reasons`), or None; a
    planned budget that leaves too little keeps the least cap (time_budget.least_cap).

    Raises:
      UsageError: a budget the user gave leaves too little for training (names the flag).
    """
    if config.training.time_budget is None:
        return None
    known = facts.train_examples is not None and facts.eval_examples is not None
    planned = reasons.get("time_budget")  # why the plan chose it, when the user did not
    try:
        cap, why = training_cap(parse_duration(config.training.time_budget),
                                facts.train_examples + facts.eval_examples if known else None,
                                config.tuning.minutes if config.tuning.enabled else None)
    except ValueError as e:
        if not planned:
            raise UsageError(f"--time-budget {config.training.time_budget}: {e}") from None
        # A default never refuses a run, nor is dropped: it keeps its least cap, and says so.
        cap, why = least_cap(config.training.time_budget, str(e))
        reasons["time_budget"] = f"{why} ({planned})"
        return cap
    reasons["time_budget"] = f"{planned}. {why}" if planned else why
    return cap


def _flag(name: str) -> str:
    return name.replace("_", "-")


def plan_lines(plan: Plan) -> List[str]:
    """The run header: each planned value and why, a line each."""
    c, r = plan.config, plan.reasons
    steps, side = plan.steps_per_epoch(), c.model.image_size
    length = (f"{c.training.train_steps} steps" if c.training.train_steps else
              f"{c.training.epochs} epochs" + (f" of {steps} steps" if steps else "")
              if c.training.epochs else "epochs from the train split")
    lines = [
        f"plan      {plan.hardware.upper()}; model {c.model.network}: {r['model']}"
        + (f"; width {r['model_width']}" if c.model.width != 1 else ""),
        f"          image {side}x{side}x{c.model.channels}: {r['image_size']}",
        f"          batch {c.training.batch_size}: {r['batch_size']}",
        f"          {length}: {r['epochs']}",
        f"          learning rate {c.training.learning_rate:g}, warmup {rules.WARMUP_EPOCHS:g} "
        f"epoch then cosine; early stopping on the eval split's val_loss after "
        f"{c.training.early_stopping_patience} epochs without improvement, best weights kept: "
        "the eval accuracy is of an epoch chosen on the eval images"
        if c.training.early_stopping_patience else
        f"          learning rate {c.training.learning_rate:g}, warmup then cosine; no early "
        "stopping, so the eval split does not choose the epoch",
        f"          augmentation: {_augmentation_text(c, plan.source)}; "
        f"label smoothing {c.training.label_smoothing:g}",
        f"          test-time flip: {_test_flip_text(c, r['test_flip'])}",
        f"          class weights if the largest class has over {rules.IMBALANCE_RATIO:g}x "
        "the smallest's train images (the Trainer says which it found)",
        f"          bless at accuracy >= {c.evaluation.accuracy_threshold:g}: "
        f"{r['accuracy_threshold']}",
    ]
    return (lines[:1] + _worker_lines(plan) + _source_lines(plan) + lines[1:4] + _phase_lines(plan)
            + _time_budget_lines(plan) + _warm_start_lines(plan) + _tuning_lines(plan)
            + lines[4:])


def _time_budget_lines(plan: Plan) -> List[str]:
    """--time-budget's training cap, and how it was sized (or why a planned budget that
    cannot fit keeps its least cap)."""
    if plan.train_cap_s is None:
        return []
    return [f"          time budget: training capped at {plan.train_cap_s:.0f} s: "
            f"{plan.reasons['time_budget']}"]


def _tuning_lines(plan: Plan) -> List[str]:
    """What --tune searches, and within what budget."""
    c = plan.config
    if not c.tuning.enabled:
        return []
    t = plan.tuning_params()
    names = ", ".join(n.replace("_", " ")
                      for n in searched(plan.trainer_params(), c.model.image_size))
    what = (f"its own tuner_fn if the module file has one, else {names}"
            if c.model.network == MODULE else names)
    holdout = planned_holdout(plan.facts.train_examples,
                              (c.model.image_size, c.model.image_size, c.model.channels), t)
    rule = rule_line(holdout, c.tuning.trials - 1)  # None: the plan's trial alone
    return [f"          tune: at most {c.tuning.trials} trials in {c.tuning.minutes:g} min "
            f"(the plan's own, {t.initial_points} random, then Bayesian) over {what}; "
            f"the plan's trial trains all the Trainer's epochs, each other "
            f"{t.epoch_share:.0%} of them, on up to {t.max_examples:,} train images; each "
            f"is scored on {t.holdout_share:.0%} of them held out; bad trials stop early "
            "(median rule)"] + ([f"          {rule}"] if rule else [])


def _warm_start_lines(plan: Plan) -> List[str]:
    """What warm start will do; whether it can, the Trainer decides and says."""
    if plan.config.training.warm_start != "on":
        return ["          warm start: off (--warm-start off): every run trains from scratch"]
    steps = plan.config.training.train_steps
    length = (f"the {steps} steps asked for" if steps
              else f"{rules.WARM_START_EPOCH_SHARE:.1%} of the epochs: it starts where that "
                   "model ended")
    return ["          warm start: from the last blessed model trained on earlier data, when "
            f"its network and input shape match (new classes: a new head), for {length}"]


def _worker_lines(plan: Plan) -> List[str]:
    c = plan.config
    if c.cluster.ps:
        return [f"          workers: ParameterServerStrategy: a coordinator, {c.cluster.workers} "
                f"worker(s) and {c.cluster.ps} parameter server(s), local processes over loopback "
                "(a TF_CONFIG each), as a cluster's; asynchronous steps, "
                f"{plan.steps_per_execution} per call; for proving, not for speed"]
    if c.cluster.workers <= 1:
        return []
    return [f"          workers: {c.cluster.workers} local processes, MultiWorkerMirroredStrategy "
            "over loopback (a TF_CONFIG each), as a cluster's; for proving, not for speed"]


def _source_lines(plan: Plan) -> List[str]:
    """The network's origin, and for a pretrained backbone its two phases."""
    s = plan.source
    if s.kind == "module_file":
        return [f"          module file {s.path} (sha256 {s.sha256[:12]})"]
    if s.kind != "backbone":
        return []
    weights = {"imagenet": "ImageNet, through Keras (cached in ~/.keras/models)",
               NO_WEIGHTS: "none: random init, every layer trains from the start"}
    return [f"          weights {weights.get(s.weights, s.weights)}"
            + (f" (sha256 {s.weights_sha256[:12]})" if s.weights_sha256 else "")]


def _phase_lines(plan: Plan) -> List[str]:
    """A pretrained backbone's two phases."""
    c, lines = plan.config, []
    if plan.fine_tunes:
        head = (head_epochs(c.training.epochs, rules.FINE_TUNE_HEAD_SHARE) if c.training.epochs
                else f"{rules.FINE_TUNE_HEAD_SHARE:.0%} of the")
        rest = c.training.epochs - head if c.training.epochs else "the other"
        lines.append(f"          phase 1: {head} epochs train the new head, backbone "
                     f"frozen (batch norm in inference mode), lr {c.training.learning_rate:g}")
        lines.append(f"          phase 2: {rest} epochs also train the backbone's top "
                     f"blocks (batch norm stays frozen), lr {plan.fine_tune_learning_rate:g}")
    return lines


def _test_flip_text(c: PipelineConfig, why: str) -> str:
    if not c.model.test_flip:
        return why if why.startswith("off") else f"off: {why}"
    return ("the served model averages each image's scores with its mirror image's (twice "
            f"the compute an image; the eval accuracy is of that model): {why}")


def _augmentation_text(c: PipelineConfig, source: ModelSource) -> str:
    if source.augment:
        return "the module file's augment(images, params)"
    parts = [f"random resized crop (area >= {c.augment.scale:g})" if c.augment.scale else "",
             (f"warp: rotate {c.augment.rotate:g} deg, zoom {WARP_ZOOM:.0%}, shift "
              f"{c.augment.crop} px" if c.augment.rotate else
              f"pad-and-crop {c.augment.crop} px" if c.augment.crop else ""),
             "horizontal flip" if c.augment.flip else "",
             f"brightness/contrast {c.augment.color:g}" if c.augment.color else ""]
    return ", ".join(p for p in parts if p) or "none"
