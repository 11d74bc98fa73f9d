"""The DAG as constructed: ids, wiring and parameters come from the one config."""
import json

import pytest

from modules.params import TrainerParams
from settings.config import PipelineConfig
from core.contract import COMPONENT_IDS
from pipeline.dag import create_components, create_pipeline, eval_config
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import make_plan

DIGITS = DataFacts(10, 800, 200, 28, 28, 28, 1)


def planned(config, facts=DIGITS):
    return make_plan(config, facts, "cpu", 8 << 30)


@pytest.fixture
def config(tmp_path):
    return PipelineConfig.from_values(data=str(tmp_path / "d"), output=str(tmp_path / "o"),
                                      train_steps=123, accuracy_threshold=0.7,
                                      baseline_tolerance=0.02)


def test_components_are_the_nine_stages_in_order(config):
    assert tuple(c.id for c in create_components(planned(config))) == COMPONENT_IDS


def test_transform_analyzes_train_only_and_is_applied_on_the_fly(config):
    photos = DataFacts(5, 80, 20, 32, 32, 32, 3)
    transform = {c.id: c for c in create_components(planned(config, photos))}["Transform"]
    props = transform.exec_properties
    assert "transformed_examples" not in transform.outputs
    assert json.loads(props["custom_config"]) == {
        "transform_params": {"image_size": 32, "channels": 3}}
    assert '"analyze": [\n    "train"\n  ]' in props["splits_config"]


def test_statistics_use_bounded_memory_sketches(config):
    # Exact top-k over the encoded-image feature grew with the data (bench/pipeline_runs/scaling).
    statistics = {c.id: c for c in create_components(planned(config))}["StatisticsGen"]
    options = json.loads(statistics.exec_properties["stats_options_json"])
    assert options["_use_sketch_based_topk_uniques"] is True


def test_trainer_reads_raw_examples_with_config_hyperparameters(config):
    components = {c.id: c for c in create_components(planned(config))}
    trainer = components["Trainer"]
    assert trainer.inputs["examples"].producer_component_id == "ImageExampleGen"
    assert "num_steps" not in trainer.exec_properties["train_args"]  # in TrainerParams
    params = TrainerParams.from_custom_config(
        json.loads(trainer.exec_properties["custom_config"]))
    assert params == planned(config).trainer_params()
    assert (params.batch_size, params.model, params.tpu, params.train_steps) == (
        64, "cnn", None, 123)


def test_eval_config_thresholds_bind_the_overall_slice_only(config):
    metric = eval_config(planned(config).config).metrics_specs[0].metrics[0]
    (per_slice,) = metric.per_slice_thresholds
    assert [s.feature_keys for s in per_slice.slicing_specs] == [[]]
    threshold = per_slice.threshold
    assert threshold.value_threshold.lower_bound.value == pytest.approx(0.7)
    # TFMA's change bound is just outside the tolerance; the Evaluator's exact gate decides.
    assert -0.02 - 2e-6 < threshold.change_threshold.absolute.value < -0.02
    assert [s.feature_keys for s in eval_config(planned(config).config).slicing_specs] == [
        [], ["image/class/label"], ["image/slice/size"], ["image/slice/color"],
        ["image/slice/aspect"], ["image/group"]]


@pytest.mark.parametrize("right, passes", [(168, True), (167, False), (169, True)])
def test_an_accuracy_equal_to_its_threshold_passes_tfmas_validation(config, right, passes):
    # 168 of 240 is 0.7 exactly; Keras computes it in float32, TFMA compares in float64.
    import numpy as np
    import tf_keras as keras
    from tensorflow_model_analysis.evaluators import metrics_validator
    from tensorflow_model_analysis.metrics import metric_types
    accuracy = keras.metrics.Accuracy()
    accuracy.update_state(np.ones(240), np.r_[np.ones(right), np.zeros(240 - right)])
    key = metric_types.MetricKey(name="sparse_categorical_accuracy")
    checked = eval_config(planned(config).config)
    # No baseline: TFX's Evaluator drops the change threshold, as a first run does.
    checked.metrics_specs[0].metrics[0].per_slice_thresholds[0].threshold.ClearField(
        "change_threshold")
    result = metrics_validator.validate_metrics(((), {key: accuracy.result().numpy()}), checked)
    assert result.validation_ok is passes


def test_eval_config_counts_examples_for_the_audits_slice_gap(config):
    metrics = eval_config(planned(config).config).metrics_specs[0].metrics
    assert "ExampleCount" in [m.class_name for m in metrics]


def test_evaluator_carries_the_audit_gates(config):
    gated = config.replace(max_slice_gap=0.1, min_robust_accuracy=0.5)
    props = {c.id: c for c in create_components(planned(gated))}["Evaluator"].exec_properties
    assert (props["max_slice_gap"], props["min_robust_accuracy"]) == (0.1, 0.5)
    assert props.get("max_leakage_gain") is None  # unset: reported only


@pytest.mark.parametrize("baseline", ["mlmd", "pushed"])  # local, and KFP and Vertex
def test_the_evaluator_takes_statistics_gens_output_for_the_monitoring_reference(config,
                                                                                 baseline):
    nodes = {c.id: c for c in create_components(planned(config), baseline)}
    statistics = nodes["Evaluator"].inputs["statistics"]
    assert statistics.producer_component_id == "StatisticsGen"
    assert statistics.output_key == "statistics"


def test_pipeline_writes_everything_under_output(config):
    pipeline = create_pipeline(planned(config), [])
    assert pipeline.pipeline_info.pipeline_root == config.run.output + "/tfx"
    pusher = {c.id: c for c in pipeline.components}["Pusher"]
    assert config.run.output + "/serving/imagepipe" in pusher.exec_properties["push_destination"]


def test_example_gen_carries_the_reader_options(config):
    example_gen = create_components(planned(config.replace(strict=True, format="folder")))[0]
    options = example_gen.exec_properties
    assert (options["strict"], options["format"], options["eval_percent"]) == (1, "folder", 20)


def test_release_stages_carry_their_typed_settings(config):
    nodes = {c.id: c for c in create_components(planned(config))}
    tflite = nodes["TFLiteConverter"].exec_properties
    assert (tflite["quantize"], tflite["parity_tolerance"]) == ("int8", 0.01)
    assert nodes["Pusher"].exec_properties["tflite_dir"] == config.run.output + "/tflite/imagepipe"
    assert nodes["InfraValidator"].exec_properties["warmup_batch_sizes"] == "8,32"
    assert nodes["ModelCardGenerator"].exec_properties["model_name"] == "imagepipe"


def test_the_pusher_needs_both_blessings_and_takes_what_the_release_stages_made(config):
    nodes = {c.id: c for c in create_components(planned(config))}
    inputs = nodes["Pusher"].inputs
    assert inputs["model_blessing"].producer_component_id == "Evaluator"
    assert inputs["infra_blessing"].producer_component_id == "InfraValidator"
    assert inputs["tflite_model"].producer_component_id == "TFLiteConverter"
    assert inputs["model_card"].producer_component_id == "ModelCardGenerator"
    assert nodes["InfraValidator"].inputs["model_blessing"].producer_component_id == \
        "Evaluator"
