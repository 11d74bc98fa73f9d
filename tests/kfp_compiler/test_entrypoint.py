"""The Kubeflow entrypoint gives emptied input artifact types back from the inputs spec."""
import json

import pytest
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from kfp_compiler.entrypoint import INPUTS_SPEC_FLAG, INVOCATION_FLAG, restore_types, \
    with_restored_types

EXAMPLES = {"instanceSchema": "title: tfx.Examples\ntype: object\n"}
SPEC = {"artifacts": {"examples": {"artifactType": EXAMPLES}},
        "parameters": {"x": {"parameterType": "STRING"}}}


def _invocation(artifact_type) -> dict:
    return {"inputs": {"artifacts": {"examples": {"artifacts": [
        {"name": "7", "uri": "gs://b/r/ImageExampleGen/examples", "type": artifact_type}]}}},
        "outputs": {"outputFile": "/tmp/kfp_outputs/output_metadata.json"}}


def test_the_backends_empty_type_gets_the_declared_one():
    restored = restore_types(_invocation({"instanceSchema": ""}), SPEC)
    assert restored["inputs"]["artifacts"]["examples"]["artifacts"][0]["type"] == EXAMPLES


def test_a_missing_type_gets_the_declared_one_and_a_given_type_is_kept():
    missing = _invocation(None)
    del missing["inputs"]["artifacts"]["examples"]["artifacts"][0]["type"]
    assert restore_types(missing, SPEC)["inputs"]["artifacts"]["examples"]["artifacts"][0][
        "type"] == EXAMPLES
    vertex = {"schemaTitle": "tfx.Examples", "schemaVersion": "0.0.1"}
    assert restore_types(_invocation(vertex), SPEC)["inputs"]["artifacts"]["examples"][
        "artifacts"][0]["type"] == vertex


def test_only_the_invocation_argument_changes():
    argv = ["prog", "--executor_class_path", "a.B", INVOCATION_FLAG,
            json.dumps(_invocation({"instanceSchema": ""})), INPUTS_SPEC_FLAG, json.dumps(SPEC),
            "--direct_num_workers=1"]
    restored = with_restored_types(argv)
    assert restored[:4] == argv[:4] and restored[5:] == argv[5:]
    assert json.loads(restored[4])["inputs"]["artifacts"]["examples"]["artifacts"][0][
        "type"] == EXAMPLES


def test_without_an_inputs_spec_nothing_changes():
    argv = ["prog", INVOCATION_FLAG, json.dumps(_invocation({"instanceSchema": ""}))]
    assert with_restored_types(argv) == argv


def test_tfxs_own_parsing_fails_on_the_empty_type_and_accepts_the_restored_one():
    """Why the entrypoint exists: if TFX learns to cope with the empty type, this fails."""
    from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_entrypoint_utils as tfx_utils
    from tfx.types import standard_artifacts

    def parse(invocation):
        executor_input = json_format.ParseDict(invocation, pipeline_spec_pb2.ExecutorInput())
        return tfx_utils.parse_raw_artifact_dict(executor_input.inputs.artifacts)

    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'get'"):
        parse(_invocation({"instanceSchema": ""}))
    [examples] = parse(restore_types(_invocation({"instanceSchema": ""}), SPEC))["examples"]
    assert isinstance(examples, standard_artifacts.Examples)


def test_specs_compiled_before_the_move_still_find_the_entrypoint():
    # Images run `python -m pipeline.kfp_entrypoint` for specs compiled by earlier versions.
    from pipeline import kfp_entrypoint
    from kfp_compiler import entrypoint
    assert kfp_entrypoint.main is entrypoint.main
    assert kfp_entrypoint.with_restored_types is entrypoint.with_restored_types


@pytest.mark.integration  # starts Python in a subprocess: seconds
@pytest.mark.parametrize("old", ["pipeline.kfp_entrypoint", "pipeline.kubeflow.entrypoint"])
def test_the_old_dotted_paths_still_start_the_entrypoint(old):
    """`python -m <old path>` as packages compiled before the compiler moved run it: it
    reaches TFX's flag parsing (absl names the missing flag), not an ImportError."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", old], capture_output=True, text=True,
                          timeout=300)
    assert "No module named" not in done.stderr
    assert "executor_class_path" in done.stderr, done.stderr[-2000:]


def test_an_executor_class_that_moved_is_run_from_its_new_path():
    from kfp_compiler import entrypoint, tfjob
    argv = entrypoint.with_restored_types(
        ["x", "--executor_class_path", "modules.cluster.tfjob.Executor"])
    assert argv[-1] == "kfp_compiler.tfjob.Executor"
    module, name = argv[-1].rsplit(".", 1)
    assert getattr(tfjob, name) is tfjob.Executor and module == tfjob.__name__
