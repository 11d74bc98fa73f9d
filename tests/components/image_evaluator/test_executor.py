"""ImageEvaluator's adapter: a baseline marked empty is dropped before TFX's Evaluator runs,
the blessing carries the candidate's overall accuracy and the drift verdict it was given, the
audit writes audit.json, the blessing gets the monitoring reference, and a drifted span or a
failed audit gate un-blesses."""
import json
import os
import shutil

import numpy as np
import pytest
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs as specs
from tfx.utils import proto_utils

from core.contract import (AUDIT_FILE, DRIFT_FILE, DRIFT_PROPERTY, GROUP_KEY,
                           INGEST_REPORT_FILE, MONITOR_REFERENCE_FILE,
                           MONITORING_DIR, NO_BASELINE, TRAIN_STATISTICS_FILE,
                           VETOED_PROPERTY, read_drift)
from core.contract import (ACCURACY_PROPERTY, DATA_HEALTH_KEY, FILENAME_KEY,
                           JUDGED_ON_PROPERTY)
from core.intervals import wilson
from components.image_evaluator import executor
from components.image_evaluator.accuracy import overall_accuracy
from components.image_evaluator.executor import Executor
from components.image_evaluator.audit.audit import PREDICTIONS, EvalPredictions
from tests.support.examples import read_split


def _baseline(empty: int):
    model = standard_artifacts.Model()
    model.set_int_custom_property(NO_BASELINE, empty)
    return model


def _outputs(tmp_path):
    evaluation, blessing = standard_artifacts.ModelEvaluation(), \
        standard_artifacts.ModelBlessing()
    evaluation.uri, blessing.uri = str(tmp_path / "evaluation"), str(tmp_path / "blessing")
    return {specs.EVALUATION_KEY: [evaluation], specs.BLESSING_KEY: [blessing]}


def _audited(*args):
    """What a passed audit returns, for tests that leave it out: no gate blocked, and the
    predictions on a two-image eval split."""
    return {"blocked": [], PREDICTIONS: EvalPredictions(
        ["c0", "c1"], np.array([0, 1]), np.array([[0.8, 0.2], [0.3, 0.7]]))}


def _inputs_seen(monkeypatch, tmp_path, baseline):
    seen = {}
    monkeypatch.setattr(evaluator_executor.Executor, "Do",
                        lambda self, inputs, outputs, props: seen.update(inputs))
    monkeypatch.setattr(executor, "audit", _audited)
    Executor().Do({"model": [standard_artifacts.Model()], "baseline_model": baseline,
                   "examples": [_examples(str(tmp_path / "examples"))]},
                  _outputs(tmp_path), {})
    return seen


def test_an_empty_baseline_is_dropped(monkeypatch, tmp_path):
    assert _inputs_seen(monkeypatch, tmp_path, [_baseline(1)])["baseline_model"] == []


def test_a_real_baseline_and_a_resolvers_are_kept(monkeypatch, tmp_path):
    found, resolved = _baseline(0), standard_artifacts.Model()  # resolvers set no property
    assert _inputs_seen(monkeypatch, tmp_path, [found])["baseline_model"] == [found]
    assert _inputs_seen(monkeypatch, tmp_path, [resolved])["baseline_model"] == [resolved]


def _examples(uri):
    examples = standard_artifacts.Examples()
    examples.uri = uri
    examples.split_names = artifact_utils.encode_split_names(["train", "eval"])
    return examples


def _evaluate(tmp_path, exported_model, examples_uri=None, drift=None, statistics=None,
              threshold=0.0, **properties):
    """The executor for real, with `threshold` (0) and no baseline, `drift` its drift
    input, `statistics` its statistics one; returns its outputs."""
    from core.beam_deps import LOCAL_SETUP_FILE, with_setup_file
    from core.parameters import encode
    from settings.config import LOCAL_BEAM_ARGS, PipelineConfig
    from pipeline.dag import eval_config
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    shutil.copytree(exported_model.model_dir, os.path.join(model.uri, "Format-Serving"))
    outputs = _outputs(tmp_path)
    config = PipelineConfig.from_values(accuracy_threshold=threshold)
    properties = {**encode(config.audit_settings()), **properties}  # the typed thresholds
    properties.update({specs.EVAL_CONFIG_KEY: proto_utils.proto_to_json(eval_config(config)),
                       specs.EXAMPLE_SPLITS_KEY: json.dumps(["eval"])})
    beam_args = with_setup_file(LOCAL_BEAM_ARGS.split(), LOCAL_SETUP_FILE)
    context = BaseBeamExecutor.Context(beam_pipeline_args=beam_args, tmp_dir=str(tmp_path / "t"))
    inputs = {specs.EXAMPLES_KEY: [_examples(examples_uri or exported_model.examples_uri)],
              specs.MODEL_KEY: [model]}
    if drift is not None:
        inputs[executor.DRIFT_KEY] = [drift]
    if statistics is not None:
        inputs[executor.STATISTICS_KEY] = [statistics]
    Executor(context).Do(inputs, outputs, properties)
    return outputs


def _drifted(uri: str, verdict: str = "drift"):
    """An ImageDistributionValidator's output holding drift.json: brightness drifted."""
    from components.drift_validator.verdict import feature_result, judged, not_compared
    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = uri
    os.makedirs(uri, exist_ok=True)
    features = {name: feature_result(0.0, 0.2, False, "unchanged")
                for name in ("label", "size", "grayscale")}
    features["brightness"] = feature_result(0.92, 0.1, verdict == "drift",
                                            "mean brightness 33 -> 222 of 255")
    drift = judged(3, 2, features) if verdict != "not compared" else \
        not_compared(1, None, "no earlier span")
    with open(os.path.join(uri, DRIFT_FILE), "w") as f:
        json.dump(drift, f)
    return anomalies


def _judged(monkeypatch, tmp_path, drift, allow=0):
    """The executor with TFMA and the audit stubbed out; its blessing."""
    monkeypatch.setattr(evaluator_executor.Executor, "Do", lambda *args: None)
    monkeypatch.setattr(executor, "audit", _audited)
    outputs = _outputs(tmp_path)
    os.makedirs(outputs[specs.BLESSING_KEY][0].uri)
    inputs = {"model": [standard_artifacts.Model()],
              "examples": [_examples(str(tmp_path / "examples"))]}
    if drift is not None:
        inputs[executor.DRIFT_KEY] = [drift]
    Executor().Do(inputs, outputs, {executor.ALLOW_DRIFT_KEY: allow})
    return outputs[specs.BLESSING_KEY][0]


@pytest.mark.parametrize("allow", [0, 1])
def test_the_drift_verdict_is_recorded_on_the_blessing_and_vetoes_unless_allowed(
        monkeypatch, tmp_path, allow):
    blessing = _judged(monkeypatch, tmp_path, _drifted(str(tmp_path / "drift")), allow)
    recorded = json.loads(blessing.get_string_custom_property(DRIFT_PROPERTY))
    assert recorded["verdict"] == "drift" and recorded["drifted"] == ["brightness"]
    assert read_drift(blessing.uri) == recorded
    vetoed = blessing.get_string_custom_property(VETOED_PROPERTY)
    if allow:
        assert not vetoed
    else:
        assert vetoed == ("not pushed: drift in brightness (JS 0.92 > 0.10: mean brightness "
                          "33 -> 222 of 255) (span 2 -> 3) (--allow-drift pushes anyway)")


@pytest.mark.parametrize("verdict", ["ok", "not compared"])
def test_a_verdict_other_than_drift_is_recorded_and_vetoes_nothing(monkeypatch, tmp_path,
                                                                   verdict):
    blessing = _judged(monkeypatch, tmp_path, _drifted(str(tmp_path / "drift"), verdict))
    assert json.loads(blessing.get_string_custom_property(DRIFT_PROPERTY))["verdict"] == verdict
    assert not blessing.get_string_custom_property(VETOED_PROPERTY)


def test_without_a_drift_input_nothing_is_judged_or_recorded(monkeypatch, tmp_path):
    """Data without spans; an ingest report's drift entry is ImageExampleGen's, not a verdict."""
    os.makedirs(tmp_path / "examples")
    (tmp_path / "examples" / INGEST_REPORT_FILE).write_text(json.dumps(
        {"drift": {"verdict": "drift", "span": 3, "previous_span": 2, "compared": True}}))
    blessing = _judged(monkeypatch, tmp_path, None)
    assert not blessing.has_custom_property(DRIFT_PROPERTY)
    assert not blessing.get_string_custom_property(VETOED_PROPERTY)
    assert read_drift(blessing.uri) is None


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
@pytest.mark.parametrize("allow", [0, 1])
def test_a_drifted_newest_span_vetoes_the_blessing_unless_allowed(tmp_path, exported_model,
                                                                  allow):
    outputs = _evaluate(tmp_path, exported_model, allow_drift=allow,
                        drift=_drifted(str(tmp_path / "drift")))
    blessing = outputs[specs.BLESSING_KEY][0]
    assert blessing.get_int_custom_property("blessed") == allow
    assert {"BLESSED", "NOT_BLESSED"} & set(os.listdir(blessing.uri)) == {
        "BLESSED" if allow else "NOT_BLESSED"}
    vetoed = blessing.get_string_custom_property(VETOED_PROPERTY)
    assert ("brightness" in vetoed and "--allow-drift" in vetoed) if not allow else not vetoed
    assert read_drift(blessing.uri)["verdict"] == "drift"


def test_without_statistics_the_reference_has_predictions_only(monkeypatch, tmp_path):
    """A pipeline wired before the Evaluator took statistics still gets a reference."""
    blessing = _judged(monkeypatch, tmp_path, None)
    folder = os.path.join(blessing.uri, MONITORING_DIR)
    assert os.listdir(folder) == [MONITOR_REFERENCE_FILE]
    reference = json.loads(open(os.path.join(folder, MONITOR_REFERENCE_FILE)).read())
    assert reference["train_statistics"] is None
    assert reference["eval"]["predicted"] == [0, 1] and reference["labels"] == ["c0", "c1"]


def _statistics(uri: str):
    """A StatisticsGen output whose train split holds a DatasetFeatureStatisticsList."""
    from tensorflow_metadata.proto.v0 import statistics_pb2
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = uri
    stats = statistics_pb2.DatasetFeatureStatisticsList()
    stats.datasets.add(name="train", num_examples=12)
    os.makedirs(os.path.join(uri, "Split-train"))
    with open(os.path.join(uri, "Split-train", "FeatureStats.pb"), "wb") as f:
        f.write(stats.SerializeToString())
    return statistics


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
def test_the_blessing_carries_the_candidates_overall_accuracy(tmp_path, exported_model):
    statistics = _statistics(str(tmp_path / "statistics"))
    outputs = _evaluate(tmp_path, exported_model, statistics=statistics)
    blessing = outputs[specs.BLESSING_KEY][0]
    accuracy = blessing.get_float_custom_property(ACCURACY_PROPERTY)
    assert blessing.has_custom_property(ACCURACY_PROPERTY) and 0.0 <= accuracy <= 1.0
    assert accuracy == overall_accuracy(outputs[specs.EVALUATION_KEY][0].uri)
    assert blessing.get_int_custom_property("blessed") == 1  # threshold 0, no baseline
    # The audit, in both folders, pictures beside it.
    evaluation = outputs[specs.EVALUATION_KEY][0].uri
    audit = json.loads(open(os.path.join(evaluation, AUDIT_FILE)).read())
    assert audit == json.loads(open(os.path.join(blessing.uri, AUDIT_FILE)).read())
    assert {"examples", "accuracy", "seconds", "leakage", "suspects", "saliency", "robustness",
            "slices", "gates", "blocked"} <= set(audit)
    assert audit["saliency"]["method"] == "grad-cam"
    assert audit["saliency"]["layer"].startswith("dropout")  # the CNN's last spatial layer
    assert audit["slices"]["overall"] == accuracy and audit["blocked"] == []
    for row in audit["saliency"]["images"] + audit["suspects"]["top"]:
        picture = row.get("overlay") or row["thumbnail"]
        assert os.path.isfile(os.path.join(evaluation, picture))
        assert os.path.isfile(os.path.join(blessing.uri, picture))
    # The monitoring reference, from the audit's predictions: one per eval image.
    assert PREDICTIONS not in audit
    monitoring = os.path.join(blessing.uri, MONITORING_DIR)
    with open(os.path.join(monitoring, TRAIN_STATISTICS_FILE), "rb") as copied, \
            open(os.path.join(statistics.uri, "Split-train", "FeatureStats.pb"), "rb") as source:
        assert copied.read() == source.read()
    reference = json.loads(open(os.path.join(monitoring, MONITOR_REFERENCE_FILE)).read())
    count = len(read_split(exported_model.examples_uri, "eval"))
    assert reference["labels"] == exported_model.labels
    assert reference["train_statistics"] == TRAIN_STATISTICS_FILE
    assert reference["eval"]["count"] == count == audit["examples"]
    assert reference["eval"]["accuracy"] == accuracy
    eval_ = {key: reference["eval"][key] for key in ("predicted", "confidence", "label")}
    assert all(len(values) == count for values in eval_.values()), eval_
    assert all(0.5 <= c <= 1.0 for c in eval_["confidence"])  # the top of two classes
    assert set(eval_["predicted"]) | set(eval_["label"]) <= {0, 1}
    # The audit's accuracy, from the same predictions.
    assert np.mean(np.equal(eval_["predicted"], eval_["label"])) == pytest.approx(
        audit["accuracy"])


def test_no_metrics_means_no_accuracy(tmp_path):
    assert overall_accuracy(str(tmp_path)) is None


def _eval_split_with_groups(tmp_path, exported_model):
    """Examples whose eval split is 30 images the model gets right (group "a") and 20 it
    gets wrong (group "b"): overall accuracy 0.6, group b's 0, a slice gap of 0.6."""
    import tensorflow as tf
    from core.contract import LABEL_KEY
    examples = tmp_path / "examples"
    shutil.copytree(exported_model.examples_uri, examples)
    eval_dir = examples / "Split-eval"
    records = [r.numpy() for r in tf.data.TFRecordDataset(
        [str(p) for p in eval_dir.iterdir()], compression_type="GZIP")]
    serve = tf.saved_model.load(exported_model.model_dir).signatures["serving_default"]
    predicted = serve(examples=tf.constant(records))["class_id"].numpy()
    for path in eval_dir.iterdir():
        path.unlink()
    with tf.io.TFRecordWriter(str(eval_dir / "eval.gz"), "GZIP") as writer:
        for i in range(50):
            example = tf.train.Example.FromString(records[i % len(records)])
            right = i < 30
            label = int(predicted[i % len(records)]) if right else \
                1 - int(predicted[i % len(records)])
            example.features.feature[LABEL_KEY].int64_list.value[:] = [label]
            example.features.feature[GROUP_KEY].bytes_list.value[:] = [b"a" if right else b"b"]
            example.features.feature[FILENAME_KEY].bytes_list.value[:] = [f"e/{i}.png".encode()]
            writer.write(example.SerializeToString())
    return str(examples)


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
# The gate judges 0.6 overall minus the 95% upper bound of slice b's 0 of 20 (0.161): 0.439.
@pytest.mark.parametrize("limit, blessed", [(0.4, 0), (0.5, 1)])
def test_a_slice_gap_past_its_gate_vetoes_the_blessing(tmp_path, exported_model, limit,
                                                       blessed):
    outputs = _evaluate(tmp_path, exported_model,
                        _eval_split_with_groups(tmp_path, exported_model), max_slice_gap=limit)
    blessing = outputs[specs.BLESSING_KEY][0]
    audit = json.loads(open(os.path.join(blessing.uri, AUDIT_FILE)).read())
    assert audit["slices"]["worst"] == {"feature": GROUP_KEY, "value": "b", "accuracy": 0.0,
                                        "examples": 20, "interval": list(wilson(0, 20))}
    assert audit["slices"]["gap"] == pytest.approx(0.6)
    assert audit["slices"]["judged_gap"] == pytest.approx(0.6 - wilson(0, 20)[1])
    assert audit["gates"]["max_slice_gap"]["passed"] == bool(blessed)
    assert blessing.get_int_custom_property("blessed") == blessed
    assert ("--max-slice-gap" in blessing.get_string_custom_property(VETOED_PROPERTY)) \
        != bool(blessed)
    assert os.path.exists(os.path.join(blessing.uri, "BLESSED" if blessed else "NOT_BLESSED"))


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
def test_leaked_eval_images_cannot_lift_the_accuracy_over_the_threshold(tmp_path,
                                                                        exported_model):
    """0.6 over all 50 eval images passes 0.5; 20 of the 30 right ones have a copy in
    train, and without them the accuracy is 10/30: the model is not blessed."""
    examples = _eval_split_with_groups(tmp_path, exported_model)
    report_path = os.path.join(examples, INGEST_REPORT_FILE)
    report = json.loads(open(report_path).read()) if os.path.exists(report_path) else {}
    report[DATA_HEALTH_KEY] = {"leakage": {"eval_paths": [f"e/{i}.png" for i in range(20)]}}
    with open(report_path, "w") as f:
        json.dump(report, f)
    outputs = _evaluate(tmp_path, exported_model, examples, threshold=0.5)
    blessing = outputs[specs.BLESSING_KEY][0]
    assert blessing.get_float_custom_property(ACCURACY_PROPERTY) == pytest.approx(0.6)
    assert blessing.get_int_custom_property("blessed") == 0
    reason = blessing.get_string_custom_property(VETOED_PROPERTY)
    assert "accuracy without the 20 eval image(s) that have a copy in train 0.3333 (n=30) " \
           "below --accuracy-threshold 0.5" in reason
    judged = json.loads(blessing.get_string_custom_property(JUDGED_ON_PROPERTY))
    assert judged["figure"] == "accuracy_without_leaked" and judged["examples"] == 30
    assert judged["value"] == pytest.approx(1 / 3) and judged["threshold"] == 0.5
    assert os.path.exists(os.path.join(blessing.uri, "NOT_BLESSED"))


@pytest.mark.parametrize("threshold, tolerance", [(0.8, 0.01), (0.7, 0.02), (0.97, 0.05)])
def test_a_package_compiled_before_the_typed_thresholds_gets_them_from_its_eval_config(
        threshold, tolerance):
    """Its eval config holds float32 bounds (as_metric_float, then for the change too); the
    audit recovers the decimals typed, not 0.800000011920929."""
    import numpy as np
    from settings.config import PipelineConfig
    from pipeline.dag import eval_config
    from components.image_evaluator.executor import settings_of
    config = eval_config(PipelineConfig.from_values(accuracy_threshold=threshold,
                                                    baseline_tolerance=tolerance))
    change = config.metrics_specs[0].metrics[0].per_slice_thresholds[0].threshold
    change.change_threshold.absolute.value = float(np.float32(-tolerance))  # as compiled then
    old = {specs.EVAL_CONFIG_KEY: proto_utils.proto_to_json(config)}
    settings = settings_of(old)
    assert (settings.accuracy_threshold, settings.baseline_tolerance) == (threshold, tolerance)
    assert settings_of({**old, "accuracy_threshold": 0.5}).accuracy_threshold == 0.5
