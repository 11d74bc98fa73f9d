"""ImageEvaluator's adapter: a baseline marked empty is dropped before TFX's Evaluator runs,
and the blessing carries the candidate's overall accuracy."""
import json
import os
import shutil

import pytest
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs as specs
from tfx.utils import proto_utils

from components.contract import NO_BASELINE
from components.contract import ACCURACY_PROPERTY
from components.image_evaluator.accuracy import overall_accuracy
from components.image_evaluator.executor import Executor


def _baseline(empty: int):
    model = standard_artifacts.Model()
    model.set_int_custom_property(NO_BASELINE, empty)
    return model


def _outputs(tmp_path):
    evaluation, blessing = standard_artifacts.ModelEvaluation(), \
        standard_artifacts.ModelBlessing()
    evaluation.uri, blessing.uri = str(tmp_path / "evaluation"), str(tmp_path / "blessing")
    return {specs.EVALUATION_KEY: [evaluation], specs.BLESSING_KEY: [blessing]}


def _inputs_seen(monkeypatch, tmp_path, baseline):
    seen = {}
    monkeypatch.setattr(evaluator_executor.Executor, "Do",
                        lambda self, inputs, outputs, props: seen.update(inputs))
    Executor().Do({"model": [standard_artifacts.Model()], "baseline_model": baseline},
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


def _evaluate(tmp_path, exported_model, examples_uri=None, **properties):
    """The executor for real, with threshold 0 and no baseline; returns its outputs."""
    from pipeline.beam_deps import LOCAL_SETUP_FILE, with_setup_file
    from pipeline.config import LOCAL_BEAM_ARGS, PipelineConfig
    from pipeline.dag import eval_config
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    shutil.copytree(exported_model.model_dir, os.path.join(model.uri, "Format-Serving"))
    outputs = _outputs(tmp_path)
    properties.update({specs.EVAL_CONFIG_KEY: proto_utils.proto_to_json(
                           eval_config(PipelineConfig(accuracy_threshold=0.0))),
                       specs.EXAMPLE_SPLITS_KEY: json.dumps(["eval"])})
    beam_args = with_setup_file(LOCAL_BEAM_ARGS.split(), LOCAL_SETUP_FILE)
    context = BaseBeamExecutor.Context(beam_pipeline_args=beam_args, tmp_dir=str(tmp_path / "t"))
    Executor(context).Do(
        {specs.EXAMPLES_KEY: [_examples(examples_uri or exported_model.examples_uri)],
         specs.MODEL_KEY: [model]}, outputs, properties)
    return outputs


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
@pytest.mark.parametrize("allow", [0, 1])
def test_a_drifted_newest_span_vetoes_the_blessing_unless_allowed(tmp_path, exported_model,
                                                                   allow):
    from components.contract import INGEST_REPORT_FILE, VETOED_PROPERTY
    examples = tmp_path / "examples"
    shutil.copytree(exported_model.examples_uri, examples)
    report = json.loads((examples / INGEST_REPORT_FILE).read_text())
    report["drift"] = {"verdict": "drift", "span": 3, "previous_span": 2,
                       "drifted": ["brightness"], "features": {
                           name: {"value": 0.0, "threshold": 0.2, "drifted": False,
                                  "detail": "unchanged"}
                           for name in ("label", "size", "grayscale")}}
    report["drift"]["features"]["brightness"] = {
        "value": 0.9, "threshold": 0.1, "drifted": True,
        "detail": "mean brightness 33 -> 222 of 255"}
    (examples / INGEST_REPORT_FILE).write_text(json.dumps(report))
    outputs = _evaluate(tmp_path, exported_model, str(examples), allow_drift=allow)
    blessing = outputs[specs.BLESSING_KEY][0]
    assert blessing.get_int_custom_property("blessed") == allow
    assert os.listdir(blessing.uri) == ["BLESSED" if allow else "NOT_BLESSED"]
    vetoed = blessing.get_string_custom_property(VETOED_PROPERTY)
    assert ("brightness" in vetoed and "--allow-drift" in vetoed) if not allow else not vetoed


@pytest.mark.integration  # TFMA scores a real SavedModel with Beam
def test_the_blessing_carries_the_candidates_overall_accuracy(tmp_path, exported_model):
    outputs = _evaluate(tmp_path, exported_model)
    blessing = outputs[specs.BLESSING_KEY][0]
    accuracy = blessing.get_float_custom_property(ACCURACY_PROPERTY)
    assert blessing.has_custom_property(ACCURACY_PROPERTY) and 0.0 <= accuracy <= 1.0
    assert accuracy == overall_accuracy(outputs[specs.EVALUATION_KEY][0].uri)
    assert blessing.get_int_custom_property("blessed") == 1  # threshold 0, no baseline


def test_no_metrics_means_no_accuracy(tmp_path):
    assert overall_accuracy(str(tmp_path)) is None
