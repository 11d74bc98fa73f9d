"""The emulator's pieces that need no process: conditions, the cache key, recorded outputs.

Expected values come from the KFP 2.4 backend's sources: the CEL spec as cel-go evaluates
a condition (heterogeneous `==` is false, mixed ordering of dyn values is an error, a
type error found by the checker fails before evaluation), and the fingerprint in
backend/src/v2/cacheutils/cache_test.go.
"""
import json
import re
import types

import pytest
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.contract import EXAMPLE_GEN_ID, TRAINER_ID
from core.errors import UsageError
from kfp_emulator import emulator, kfp_cache, kfp_launcher, kfp_outputs, run_result, trigger
from tests.support.paths import GOLDEN  # tests/kfp_compiler/test_compiler.py's packages

KEY = "_ImageExampleGen.examples"
A = f"inputs.artifacts['{KEY}'].artifacts[0]"


def _input(metadata: dict, uri: str = "gs://b/examples") -> pb.ExecutorInput:
    executor_input = pb.ExecutorInput()
    artifact = executor_input.inputs.artifacts[KEY].artifacts.add(name="7", uri=uri)
    artifact.metadata.update(metadata)
    executor_input.inputs.parameter_values["mode"].string_value = "fast"
    return executor_input


SEEN = _input({"new_data": 1.0, "reason": "same", "span": 2.0})
SEEN.inputs.parameter_values["n"].number_value = 3
SEEN.inputs.parameter_values["json"].string_value = '{"k": 2}'


@pytest.mark.parametrize("condition, expected", [
    (f"({A}.metadata['new_data'] == 1.0)", True),  # what TFX writes for `Cond(... == 1)`
    (f"({A}.metadata['new_data'] == 0.0)", False),
    (f"(({A}.metadata['new_data'] > 0.0) && !(({A}.metadata['reason'] == 'same')))", False),
    (f"((({A}.uri + '/x') == 'gs://b/examples/x') || ({A}.metadata['span'] < 3.0))", True),
    (f"({A}.metadata['new_data'] == 1.0) && ({A}.metadata['span'] > 1.0)", True),  # two Conds
    (f"({A}.metadata['reason'] == 1.0)", False),  # heterogeneous equality on a dyn value
    (f"({A}.metadata['span'] == 2)", True),  # a double equals an int of its value
    (f"{A}.metadata['span'] < 3", True),  # and orders against one
    (f"(({A}.metadata['missing'] == 1.0) || true)", True),  # || absorbs the error
    (f"(false && ({A}.metadata['missing'] == 1.0))", False),
    ("inputs.parameter_values['mode'] == \"fast\"", True),
    (f"{A}.name == '7' && -1.5 < 0.0 && null == null", True),
    # Beyond what TFX writes: KFP's own dsl.If, and anything else a cluster accepts.
    ("int(inputs.parameter_values['n']) == 3 && double('2.5') == 2.5", True),
    ("string(inputs.parameter_values['n']) == '3'", True),  # a Value's number is a double
    ("parseJson(inputs.parameter_values['json']).k + 1.0 == 3.0", True),  # JSON numbers: double
    (f"has({A}.metadata.new_data) && !has({A}.metadata.missing)", True),
    (f"size({A}.uri) > 0 && {A}.uri.startsWith('gs') && 'span' in {A}.metadata", True),
    ("(2.0 - 1.0 > 0.0 ? [1.0][0] : 0.0) == 1.0 && r'raw' == 'raw'", True),
    ("outputs.output_file == ''", True),  # outputs are not provisioned yet
])
def test_conditions_evaluate_as_cel_go_does(condition, expected):
    assert trigger.evaluate(condition, SEEN) is expected


@pytest.mark.parametrize("condition, error", [
    (f"({A}.metadata['missing'] == 1.0)", 'Key not found in map : "missing"'),
    (f"(({A}.metadata['missing'] == 1.0) && true)", "Key not found"),
    (f"({A}.metadata['reason'] < 1.0)", "No matching overloads"),  # only at run time: dyn
    ("inputs.artifacts['other'].artifacts[0].uri == ''", 'Key not found in map : "other"'),
    (f"{A}.uri", "return type is not bool, got 'gs://b/examples'"),
    (f"inputs.artifacts['{KEY}'].artifacts[1].uri == ''", "index=1 size=1"),
    ("parseJson('{') == 1", "failed to unmarshal JSON"),
    ("9223372036854775807 + 1 > 0", "overflow"),
])
def test_conditions_that_cel_go_cannot_evaluate_raise(condition, error):
    with pytest.raises(trigger.ConditionError, match=re.escape(error)):
        trigger.evaluate(condition, SEEN)


@pytest.mark.parametrize("condition, error", [
    (f"({A}.metadata['new_data'] == 1.0", "Syntax error"),
    ("1.0 + 1 == 2.0", "no matching overload for '_+_' applied to '(double, int)'"),
    (f"{A}.uri == 1.0", "no matching overload for '_==_' applied to '(string, double)'"),
    ("!1", "no matching overload"),
    ("x == 1", "undeclared reference to 'x'"),
    ("inputs.nothing == 1", "undefined field 'nothing'"),
])
def test_a_condition_that_does_not_compile_is_refused(condition, error):
    with pytest.raises(UsageError, match=re.escape(error)):
        trigger.parse(condition)


@pytest.mark.parametrize("golden", ["kubeflow_tpu", "vertex_gpu"])
def test_the_conditions_imagepipe_compiles_skip_exactly_when_nothing_is_new(golden):
    spec = json.loads((GOLDEN / f"{golden}.json").read_text())["spec"]
    conditions = {task["triggerPolicy"]["condition"]
                  for task in spec["root"]["dag"]["tasks"].values() if "triggerPolicy" in task}
    assert len(conditions) == 2  # on `examples` and on `_ImageExampleGen.examples`
    for condition in conditions:
        key = re.search(r"inputs\.artifacts\['([^']+)'\]", condition).group(1)
        for new_data, runs in ((1.0, True), (0.0, False)):
            executor_input = pb.ExecutorInput()
            executor_input.inputs.artifacts[key].artifacts.add(
                name="1", uri="gs://b/e").metadata.update({"new_data": new_data})
            assert trigger.evaluate(condition, executor_input) is runs, condition


def test_a_package_with_such_a_condition_is_refused_before_anything_runs():
    spec = json_format.ParseDict({
        "pipelineInfo": {"name": "p"},
        "root": {"dag": {"tasks": {"t": {"taskInfo": {"name": "t"},
                                         "componentRef": {"name": "comp-t"},
                                         "triggerPolicy": {"condition": "has(x)"}}}}},
        "components": {"comp-t": {"executorLabel": "exec-t"}},
        "deploymentSpec": {"executors": {"exec-t": {"container": {"image": "i"}}}}},
        pb.PipelineSpec())
    with pytest.raises(UsageError, match="task t: trigger condition 'has"):
        emulator.refuse_unsupported(spec)


def test_the_fingerprint_is_the_backends_for_its_own_test_key():
    """KFP 2.4 backend/src/v2/cacheutils/cache_test.go, TestGenerateFingerPrint."""
    schema = ("title: kfp.Model\ntype: object\nproperties:\n  framework:\n    type: string\n"
              "  framework_version:\n    type: string\n")
    key = {"inputArtifactNames": {"dataset_one": {"artifactNames": ["1"]},
                                  "dataset_two": {"artifactNames": ["2"]}},
           "inputParameterValues": {"message": "Some string value", "num_steps": 5.0},
           "outputArtifactsSpec": {
               "model": {"name": "model", "type": {"instanceSchema": schema},
                         "metadata": {"name": "model"}},
               "metrics": {"name": "metrics", "type": {"schemaTitle": "kfp.Metrics"},
                           "metadata": {"name": "metrics"}}},
           "outputParametersSpec": {"output_parameter_one": "STRING",
                                    "output_parameter_two": "INT"},
           "containerSpec": {"cmdArgs": ["sh", "ec", "test"], "image": "python:3.9"}}
    assert kfp_cache.fingerprint(key) == (
        "4e8a5d7d70997b0a35429fcd481af8fcd5b9f58ef4391bdb6ad900fd1c63622b")


@pytest.mark.parametrize("value, go", [
    (5.0, "5"), (0.1, "0.1"), (1e-5, "0.00001"), (123456789.0, "123456789"), (-0.0, "-0"),
    (1e21, "1e+21"), (1.5e-7, "1.5e-7"), (1e-100, "1e-100"),
    ("a<b&c>", '"a\\u003cb\\u0026c\\u003e"'),
])
def test_values_are_encoded_as_gos_encoding_json_does(value, go):
    assert kfp_cache._go_json(value) == go


def test_the_cache_key_holds_what_the_driver_gives_it():
    component = json_format.ParseDict({
        "executorLabel": "e",
        "outputDefinitions": {"artifacts": {"model": {"artifactType": {"schemaTitle": "t"}}},
                              "parameters": {"count": {"parameterType": "NUMBER_INTEGER"}}}},
        pb.ComponentSpec())
    container = pb.PipelineDeploymentConfig.PipelineContainerSpec(
        image="img:1", command=["python", "-m", "x"], args=["{{$}}"])
    assert kfp_cache.cache_key(_input({"new_data": 1.0}), component, container) == {
        "inputArtifactNames": {KEY: {"artifactNames": ["7"]}},  # ids, never URIs or metadata
        "inputParameterValues": {"mode": "fast"},
        "outputArtifactsSpec": {"model": {"type": {"schemaTitle": "t"}}},  # no URI, no name
        "outputParametersSpec": {"count": "NUMBER_INTEGER"},
        "containerSpec": {"image": "img:1", "cmdArgs": ["python", "-m", "x", "{{$}}"]}}


def test_metadata_is_handed_on_as_ml_metadata_keeps_it():
    metadata = json_format.ParseDict({"new": True, "span": 2, "spans": [1, 2], "why": "x",
                                      "stats": {"n": 1}}, pb.RuntimeArtifact().metadata)
    assert kfp_outputs.through_mlmd("examples", metadata) == {
        "new": 1.0, "span": 2.0, "spans": {"list": [1.0, 2.0]}, "why": "x",
        "stats": {"struct": {"n": 1.0}}, "display_name": "examples"}
    with pytest.raises(ValueError, match="'gone' is null"):
        kfp_outputs.through_mlmd("examples", json_format.ParseDict(
            {"gone": None}, pb.RuntimeArtifact().metadata))


def _result(trainer: str, examples: dict, skipped: int = 0) -> run_result.RunResult:
    result = run_result.RunResult(root="r", run_id="1")
    result.states[EXAMPLE_GEN_ID] = run_result.TaskState(run_result.DONE, 1.0)
    result.outputs[EXAMPLE_GEN_ID] = {"artifacts": {"examples": {"metadata": examples}}}
    for index in range(skipped):
        result.states[f"after{index}"] = run_result.TaskState(run_result.SKIPPED, why="x")
    result.states[TRAINER_ID] = run_result.TaskState(trainer)
    return result


def test_nothing_new_says_why_no_model_was_trained():
    quiet = {"new_data": 0.0, "new_data_reason": "span 3 seen before"}
    assert run_result.nothing_new(_result("skipped", quiet)) == "span 3 seen before"
    assert run_result.nothing_new(_result("done", quiet)) is None
    assert run_result.nothing_new(_result("skipped", {"new_data": 1.0}, skipped=2)) == (
        "3 tasks skipped by their trigger conditions")
    assert run_result.nothing_new(_result("cached", {})) == (
        "0 tasks skipped by their trigger conditions, 1 reused from the cache")


def test_the_pusher_s_verdict_and_a_retry_are_read_from_the_run():
    result = _result("done", {"new_data": 1.0, "new_data_reason": "retrying after 1 failed "
                                                                 "try on these inputs: x"})
    assert run_result.retried(result).startswith("retrying after 1 failed try")
    assert run_result.verdict(result) is None  # no Pusher ran
    result.states["Pusher"] = run_result.TaskState(run_result.DONE, 1.0)
    result.outputs["Pusher"] = {"artifacts": {"pushed_model": {"metadata": {
        "verdict": "data", "verdict_reason": "the Evaluator did not bless it: drift"}}}}
    assert run_result.verdict(result) == "data: the Evaluator did not bless it: drift"
    assert run_result.retried(_result("done", {"new_data": 1.0, "new_data_reason": "new"})) \
        is None


def test_a_failed_task_s_reason_is_its_log_s_last_error(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("INFO: starting\nTraceback (most recent call last):\n  File x\n"
                   "components.serving_validator.executor.InfrastructureFailure: "
                   "ImageInfraValidator: the serving check timed out\nINFO: cleanup\n")
    assert run_result.failure_reason(str(log)) == (
        "components.serving_validator.executor.InfrastructureFailure: ImageInfraValidator: "
        "the serving check timed out")
    log.write_text("imagepipe alert: gave up retrying model=m\nTraceback\nGaveUp: same\n")
    assert run_result.failure_reason(str(log)) == "imagepipe alert: gave up retrying model=m"
    assert run_result.failure_reason(str(tmp_path / "missing")) is None


@pytest.mark.integration  # imports TFX
def test_the_conditions_tfx_compiles_from_a_cond_evaluate():
    from tfx.dsl.compiler import compiler_utils as tfx_compiler_utils
    from tfx.dsl.placeholder import placeholder_base as ph
    from tfx.orchestration.kubeflow.v2 import compiler_utils
    from tfx.types import channel, channel_utils, standard_artifacts
    examples = channel.OutputChannel(
        artifact_type=standard_artifacts.Examples, output_key="examples",
        producer_component=types.SimpleNamespace(id=EXAMPLE_GEN_ID)).future()[0]
    predicates = [
        (examples.custom_property("new_data") == 1, True),
        (ph.logical_and(examples.custom_property("new_data") > 0,
                        ph.logical_not(examples.custom_property("reason") == "same")), False),
        (ph.logical_or(examples.uri + "/x" == "gs://b/examples/x",
                       examples.property("span") < 3), True)]
    for predicate, expected in predicates:
        encoded = channel_utils.encode_placeholder_with_channels(
            predicate, tfx_compiler_utils.implicit_channel_key)
        condition = compiler_utils.placeholder_to_cel(encoded)
        assert trigger.evaluate(condition, SEEN) is expected, condition


@pytest.mark.integration  # imports TFX
def test_names_spelled_out_to_keep_run_local_light_match_their_sources():
    from tfx.types import standard_component_specs
    from components.image_example_gen import novelty
    from kfp_compiler import tfjob
    assert run_result.EXAMPLES_KEY == standard_component_specs.EXAMPLES_KEY
    assert run_result.NEW_DATA == novelty.NEW_DATA_PROPERTY
    assert run_result.NEW_DATA_REASON == novelty.NEW_DATA_REASON_PROPERTY
    assert kfp_launcher.OPERATOR_ENV == tfjob.OPERATOR_ENV
