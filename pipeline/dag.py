"""The TFX DAG: ingest -> validate -> transform -> train -> evaluate -> check -> push.

Runner-agnostic: the local runner and the Kubeflow/Vertex compiler call
`create_components` with the one config and add only their environment. The
one difference between targets is how the baseline model is found (BASELINES).
"""
from typing import List

import numpy as np

import tensorflow_model_analysis as tfma
# The modules `tfx.v1` re-exports, imported directly: `from tfx import v1` also
# imports tfx.v1.extensions and with it Vertex AI's client library, a large
# share of every command's start (python -X importtime; docs/performance.md),
# for nothing a local run uses.
from tfx.components import ExampleValidator, SchemaGen, StatisticsGen, Trainer, Transform
from tfx.dsl.components.base import executor_spec
from tfx.dsl.components.common.resolver import Resolver
from tfx.dsl.experimental.conditionals.conditional import Cond
from tfx.orchestration import metadata
from tfx.orchestration.pipeline import Pipeline
from tfx.proto import pusher_pb2, trainer_pb2, transform_pb2
from tfx.types import standard_artifacts
from tfx.types.channel import Channel, ChannelWrappedPlaceholder

from components.resolvers import latest_blessed_other as strategy
from components.resolvers.latest_blessed_other import LatestBlessedOtherModelStrategy
from core import contract as ids
from core.contract import (EVAL, LABEL_KEY, NEW_DATA_PROPERTY, NEWEST_SPAN_SPLIT,
                           PREVIOUS_SPAN_SPLIT, PROBABILITIES, SERVING_DEFAULT,
                           SLICE_KEYS, TRAIN)
from components.image_example_gen.component import ImageExampleGen
from components.drift_validator.comparators import stats_options
from components.drift_validator.component import ImageDistributionValidator
from components.image_evaluator.component import ImageEvaluator
from components.image_example_gen.spans import is_pattern
from components.image_pusher.component import ImagePusher
from components.model_card.component import ModelCardGenerator
from components.serving_validator.component import ImageInfraValidator
from components.tflite_converter.component import TFLiteConverter
from components.image_tuner.component import ImageTuner
from components.pushed_baseline.component import PushedBaseline
from components.pushed_warm_start.component import PushedWarmStart
from components.resolvers import latest_blessed_earlier_data as warm_start_strategy
from components.resolvers.latest_blessed_earlier_data import LatestBlessedEarlierDataModelStrategy
from modules.cluster import launcher
from core.beam_deps import LOCAL_SETUP_FILE, with_setup_file
from settings.config import PipelineConfig
from pipeline.planning.plan import Plan

# How each target finds the last blessed model:
#   mlmd:   a resolver querying ML Metadata, skipping the candidate (local runs);
#   pushed: the newest version in service in the push destination (Kubeflow and
#           Vertex): open-source KFP cannot run resolvers, and on Vertex a
#           resolver over its ML Metadata would not see a rollback's pin
#           (served.json); see components/pushed_baseline/latest.py.
BASELINES = ("mlmd", "pushed")
DRIFT_SPLITS = (NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT)
PREPROCESSING_FN = "modules.preprocessing.preprocessing_fn"
RUN_FN = "modules.trainer.run_fn"
TUNER_FN = "modules.tuning.search.tuner_fn"


# TFMA's change from the baseline is the difference of two float32 accuracies, each within
# 2**-25 of its exact k/n; its bound is moved this far outward so that TFMA never refuses a
# change the exact gate passes (a change of exactly -0.02 is float32's -0.02000004).
CHANGE_BOUND_SLACK = 1e-6


def as_metric_float(bound: float) -> float:
    """`bound` rounded to float32, the precision Keras computes accuracy in.

    TFMA's validator (evaluators/metrics_validator.py) checks `float(metric) >=
    lower_bound`, the metric being float32(k/n). Rounding is monotone, so a bound
    rounded alike never refuses a k/n at or above the typed threshold: 168 of 240 is
    float32 0.699999988, which float64 0.7 would refuse. TFMA can still pass a k/n just
    under the threshold that float32 rounds onto it; the Evaluator's exact gate
    (components/image_evaluator/audit/gates.py accuracy_gates) refuses those.
    """
    return float(np.float32(bound))


def change_bound(tolerance: float) -> float:
    """TFMA's lower bound on the change from the baseline, on the safe side of
    -`tolerance` (CHANGE_BOUND_SLACK); the exact gate decides at the edge."""
    return -float(tolerance) - CHANGE_BOUND_SLACK


def eval_config(config: PipelineConfig) -> tfma.EvalConfig:
    """Accuracy must reach the threshold, and not fall below the baseline's minus tolerance.

    TFMA's bounds pre-filter in floats; the Evaluator's exact gates decide (as_metric_float).

    `config` is a planned one (pipeline/planning/plan.py), so its threshold is resolved.

    The thresholds bind the overall slice only. Per-class slices are computed
    for reporting; thresholding them too would let one hard class veto a
    model whose overall accuracy passes. The confusion matrix (argmax, the
    plot's default threshold 0.0) is for reports too; summary.json carries it.
    The slices of SLICE_KEYS (size, color, aspect, the user's group) and their
    example counts feed the audit's slice gap (components/image_evaluator/audit/); a
    feature the examples lack (older data, no --groups) gives no slices.
    """
    threshold = tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(
            lower_bound={"value": as_metric_float(config.evaluation.accuracy_threshold)}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER,
            absolute={"value": change_bound(config.evaluation.baseline_tolerance)}))
    accuracy = tfma.MetricConfig(
        class_name="SparseCategoricalAccuracy",
        per_slice_thresholds=[tfma.PerSliceMetricThreshold(
            slicing_specs=[tfma.SlicingSpec()], threshold=threshold)])
    return tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(signature_name=SERVING_DEFAULT, label_key=LABEL_KEY,
                                    prediction_key=PROBABILITIES)],
        slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=[LABEL_KEY]),
                       *[tfma.SlicingSpec(feature_keys=[key]) for key in SLICE_KEYS]],
        metrics_specs=[tfma.MetricsSpec(metrics=[
            accuracy, tfma.MetricConfig(class_name="ExampleCount"),
            tfma.MetricConfig(class_name="MultiClassConfusionMatrixPlot")])])


def _baseline(kind: str, config: PipelineConfig, trainer):
    """The node whose `model` output is the baseline for the Evaluator (see BASELINES)."""
    if kind == "pushed":
        return PushedBaseline(candidate=trainer.outputs["model"],
                              serving_dir=config.serving_dir).with_id(ids.PUSHED_BASELINE_ID)
    if kind != "mlmd":
        raise ValueError(f"baseline must be one of {BASELINES}, got {kind!r}")
    return Resolver(
        strategy_class=LatestBlessedOtherModelStrategy,
        **{strategy.MODEL: Channel(type=standard_artifacts.Model),
           strategy.BLESSING: Channel(type=standard_artifacts.ModelBlessing),
           strategy.CANDIDATE: trainer.outputs["model"]}).with_id(ids.BASELINE_ID)


def _warm_start(config: PipelineConfig, baseline_kind: str, example_gen):
    """The node whose `model` the Trainer may start from, or None with warm start off.

    Local runs: a resolver over ML Metadata's lineage
    (components/resolvers/latest_blessed_earlier_data.py). Compiled ones, whose
    steps cannot reach the cluster's ML Metadata: the version served now, read
    from the push destination (components/pushed_warm_start/). Only with warm
    start on: the base model is a Trainer input, and a change of it (a new
    blessing, a rollback) would retrain on unchanged data.
    """
    if config.training.warm_start != "on":
        return None
    if baseline_kind != "mlmd":
        return PushedWarmStart(serving_dir=config.serving_dir).with_id(ids.PUSHED_WARM_START_ID)
    return Resolver(
        strategy_class=LatestBlessedEarlierDataModelStrategy,
        **{strategy.MODEL: Channel(type=standard_artifacts.Model),
           strategy.BLESSING: Channel(type=standard_artifacts.ModelBlessing),
           warm_start_strategy.EXAMPLES: example_gen.outputs["examples"]}
    ).with_id(ids.WARM_START_ID)


def _tuner(plan: Plan, example_gen, transform, schema_gen) -> ImageTuner:
    """TFX's Tuner running our tuner_fn (modules/tuning/search.py), on the Trainer's
    inputs and settings plus the search's own."""
    return ImageTuner(
        tuner_fn=TUNER_FN, examples=example_gen.outputs["examples"],
        transform_graph=transform.outputs["transform_graph"],
        schema=schema_gen.outputs["schema"],
        train_args=trainer_pb2.TrainArgs(splits=[TRAIN]),
        eval_args=trainer_pb2.EvalArgs(splits=[EVAL]),
        custom_config={**plan.trainer_params().to_custom_config(),
                       **plan.tuning_params().to_custom_config()}).with_id(ids.TUNER_ID)


def _trainer(plan: Plan, example_gen, transform, schema_gen, base=None,
             tuner=None) -> Trainer:
    """The stock Trainer running our run_fn; with several local workers, its executor
    starts them (modules/cluster/launcher.py). `base`: the warm-start resolver;
    `tuner`: the Tuner whose best hyperparameters it trains with."""
    extra = {} if plan.config.cluster.workers <= 1 and not plan.config.cluster.ps else {
        "custom_executor_spec": executor_spec.ExecutorClassSpec(launcher.Executor)}
    if base is not None:
        extra["base_model"] = base.outputs["model"]
    if tuner is not None:
        extra["hyperparameters"] = tuner.outputs["best_hyperparameters"]
    trainer = Trainer(
        **extra,
        run_fn=RUN_FN,
        examples=example_gen.outputs["examples"],
        transform_graph=transform.outputs["transform_graph"],
        schema=schema_gen.outputs["schema"],
        # Steps and epochs travel in TrainerParams: the Trainer sizes epochs on
        # the train split it actually gets.
        train_args=trainer_pb2.TrainArgs(splits=[TRAIN]),
        eval_args=trainer_pb2.EvalArgs(splits=[EVAL]),
        custom_config=plan.trainer_params().to_custom_config()).with_id(ids.TRAINER_ID)
    return trainer


def create_components(plan: Plan, baseline_kind: str = "mlmd") -> List:
    """The components in execution order, from a resolved plan (pipeline/planning/plan.py).

    ImageExampleGen always runs; every later step runs only when it reports new
    inputs (components/image_example_gen/novelty.py). The condition is TFX's `Cond`,
    which the Kubeflow V2 compiler turns into each step's trigger condition, so a
    scheduled compiled run without new data trains and pushes nothing; locally,
    TFX's cache does the same (ImageExampleGen always reports new there).
    """
    config = plan.config
    # Locally TFX's cache decides what re-runs (a changed flag re-runs only the steps it
    # reaches), so ImageExampleGen judges novelty only where no cache can: compiled runs.
    # A local execution that found nothing new would stay cached with new_data 0, and
    # skip the steps a later changed flag should re-run.
    judged_in = config.serving_dir if baseline_kind != "mlmd" else None
    example_gen = ImageExampleGen(input_base=config.ingest.data, options=config.ingest_options(),
                                  serving_dir=judged_in).with_id(ids.EXAMPLE_GEN_ID)
    # Not `.future()`: in TFX 1.16 it fixes the placeholder's key to
    # "_ImageExampleGen.examples", and the Kubeflow V2 compiler fills only empty keys,
    # so a step that takes the examples as `examples` would get a condition on an
    # input it does not have. Without a key, each step's own input key is used.
    examples = ChannelWrappedPlaceholder(example_gen.outputs["examples"])
    new_data = examples[0].custom_property(NEW_DATA_PROPERTY)
    with Cond(new_data == 1):
        later = _after_ingestion(plan, baseline_kind, example_gen)
    return [example_gen, *later]


def _data_checks(config: PipelineConfig, example_gen) -> List:
    """StatisticsGen, SchemaGen, ExampleValidator and, for spans, the drift check."""
    examples = example_gen.outputs["examples"]
    # Sketch-based top-k/uniques: TFDV's exact ones count every distinct value
    # of every bytes feature through a group-by, and each encoded image is a
    # distinct value, so memory grew with the data; sketches grow far less
    # (measured: docs/performance.md). 100 quantile buckets: the drift check's size
    # measure compares height and width quantiles, which 10 buckets leave noisy
    # (docs/continuous.md, "Drift").
    statistics_gen = StatisticsGen(
        examples=examples, stats_options=stats_options()).with_id(ids.STATISTICS_GEN_ID)
    statistics = statistics_gen.outputs["statistics"]
    # The two whole-span splits are for the drift check only.
    schema_gen = SchemaGen(statistics=statistics, infer_feature_shape=True,
                           exclude_splits=list(DRIFT_SPLITS)).with_id(ids.SCHEMA_GEN_ID)
    example_validator = ExampleValidator(
        statistics=statistics, schema=schema_gen.outputs["schema"],
        exclude_splits=list(DRIFT_SPLITS)).with_id(ids.EXAMPLE_VALIDATOR_ID)
    drift = (ImageDistributionValidator(statistics=statistics, examples=examples,
                                        settings=config.drift_settings()
                                        ).with_id(ids.DRIFT_VALIDATOR_ID)
             if is_pattern(config.ingest.data) else None)
    return [statistics_gen, schema_gen, example_validator, *([drift] if drift else [])]


def _after_ingestion(plan: Plan, baseline_kind: str, example_gen) -> List:
    """Every step after ImageExampleGen, in execution order."""
    config = plan.config
    checks = _data_checks(config, example_gen)
    schema_gen, drift = checks[1], (checks[3] if len(checks) > 3 else None)
    transform = Transform(
        examples=example_gen.outputs["examples"], schema=schema_gen.outputs["schema"],
        preprocessing_fn=PREPROCESSING_FN, materialize=False,
        # StatisticsGen already profiled the raw data; Transform's own pre/post
        # statistics would cost a second pass over every image.
        disable_statistics=True,
        splits_config=transform_pb2.SplitsConfig(analyze=[TRAIN]),
        custom_config=plan.transform_params().to_custom_config()).with_id(ids.TRANSFORM_ID)
    base = _warm_start(config, baseline_kind, example_gen)
    tuner = _tuner(plan, example_gen, transform, schema_gen) if config.tuning.enabled else None
    trainer = _trainer(plan, example_gen, transform, schema_gen, base, tuner)
    baseline = _baseline(baseline_kind, config, trainer)
    evaluator = ImageEvaluator(
        examples=example_gen.outputs["examples"], model=trainer.outputs["model"],
        baseline_model=baseline.outputs["model"], eval_config=eval_config(config),
        example_splits=[EVAL], allow_drift=config.push.allow_drift,
        drift=drift.outputs["anomalies"] if drift else None,
        # For the monitoring reference the Pusher ships: `imagepipe monitor` compares a
        # window of traffic with the train split's statistics.
        statistics=checks[0].outputs["statistics"],
        settings=config.audit_settings()).with_id(ids.EVALUATOR_ID)
    stages = _release(config, example_gen, trainer, evaluator)
    return [checks[0], *([base] if base is not None else []), *checks[1:], transform,
            *([tuner] if tuner is not None else []), trainer, baseline, evaluator, *stages]


def _release(config: PipelineConfig, example_gen, trainer, evaluator) -> List:
    """After the Evaluator, as TFX orders them: the serving check (InfraValidator), the
    TFLite conversion, the model card, and the Pusher, which needs both blessings."""
    model, blessing = trainer.outputs["model"], evaluator.outputs["blessing"]
    examples = example_gen.outputs["examples"]
    infra = ImageInfraValidator(model=model, examples=examples, model_blessing=blessing,
                                settings=config.serving_check_settings()
                                ).with_id(ids.INFRA_VALIDATOR_ID)
    infra_blessing = infra.outputs["blessing"]
    tflite = TFLiteConverter(model=model, examples=examples, model_blessing=blessing,
                             infra_blessing=infra_blessing, settings=config.tflite_settings()
                             ).with_id(ids.TFLITE_CONVERTER_ID)
    card = ModelCardGenerator(model=model, model_blessing=blessing, examples=examples,
                              infra_blessing=infra_blessing,
                              tflite_model=tflite.outputs["tflite_model"],
                              settings=config.card_settings()).with_id(ids.MODEL_CARD_ID)
    pusher = ImagePusher(
        model=model, model_blessing=blessing, infra_blessing=infra_blessing,
        push_destination=pusher_pb2.PushDestination(
            filesystem=pusher_pb2.PushDestination.Filesystem(base_directory=config.serving_dir)),
        examples=examples, settings=config.push_settings(),
        tflite_model=tflite.outputs["tflite_model"], model_card=card.outputs["model_card"],
    ).with_id(ids.PUSHER_ID)
    return [infra, tflite, card, pusher]


def create_pipeline(plan: Plan, beam_pipeline_args: List[str],
                    baseline_kind: str = "mlmd",
                    setup_file: str = LOCAL_SETUP_FILE) -> Pipeline:
    """A TFX pipeline with caching on, its artifacts under `config.pipeline_root`.

    The SQLite ML Metadata store is local runs' only; on KFP and Vertex the
    orchestrator brings its own. `setup_file` is imagepipe's setup.py where
    the components run (see core/beam_deps.py).
    """
    config = plan.config
    connection = (metadata.sqlite_metadata_connection_config(
        config.metadata_path) if baseline_kind == "mlmd" else None)
    return Pipeline(
        pipeline_name=config.run.pipeline_name,
        pipeline_root=config.pipeline_root,
        components=create_components(plan, baseline_kind),
        enable_cache=True,
        metadata_connection_config=connection,
        beam_pipeline_args=with_setup_file(beam_pipeline_args, setup_file))
