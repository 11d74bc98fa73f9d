"""The Kubeflow target's container entrypoint: restore input artifact types, then run TFX's.

    python -m kfp_compiler.entrypoint --executor_class_path CLASS \
        --json_serialized_invocation_args '{{$}}' --json_serialized_inputs_spec_args SPEC ...

Takes exactly the arguments of TFX's
tfx.orchestration.kubeflow.v2.container.kubeflow_v2_run_executor, which it
then runs. Why: the open-source KFP v2 backend hands upstream artifacts to a
step with an empty type (`instanceSchema: ""`; backend metadata/client.go,
GetOutputArtifactsByExecutionId: "TODO(Bobgy): figure out how to get
schema"), and TFX picks each input's artifact class from that type
(kubeflow_v2_entrypoint_utils._retrieve_class_path), failing on
yaml.safe_load("") with "'NoneType' object has no attribute 'get'". The
component's own input definitions, which TFX's compiler already passes as
--json_serialized_inputs_spec_args (spec 2.1), name every input's type.
"""
import json
import sys
from typing import List, Optional

INVOCATION_FLAG = "--json_serialized_invocation_args"
INPUTS_SPEC_FLAG = "--json_serialized_inputs_spec_args"
EXECUTOR_FLAG = "--executor_class_path"
# Executor classes that moved: packages compiled before name the old dotted path, and an
# image built from this code must still run them (as the forwarders in pipeline/ do for
# this entrypoint's own old paths).
MOVED_EXECUTORS = {"modules.cluster.tfjob.Executor": "kfp_compiler.tfjob.Executor"}


def _has_type(artifact_type: Optional[dict]) -> bool:
    artifact_type = artifact_type or {}
    return bool(artifact_type.get("schemaTitle") or
                (artifact_type.get("instanceSchema") or "").strip())


def restore_types(executor_input: dict, inputs_spec: dict) -> dict:
    """`executor_input` (ExecutorInput JSON) with each untyped input artifact given its
    declared type from `inputs_spec` (ComponentInputsSpec JSON); typed ones are kept."""
    declared = inputs_spec.get("artifacts", {})
    for key, artifacts in executor_input.get("inputs", {}).get("artifacts", {}).items():
        artifact_type = declared.get(key, {}).get("artifactType")
        for artifact in artifacts.get("artifacts", []):
            if artifact_type and not _has_type(artifact.get("type")):
                artifact["type"] = artifact_type
    return executor_input


def _value_index(argv: List[str], flag: str) -> Optional[int]:
    """The index of `flag`'s value; TFX's compiler writes `--flag value`, never `--flag=value`."""
    at = argv.index(flag) + 1 if flag in argv else None
    return at if at is not None and at < len(argv) else None


def with_restored_types(argv: List[str]) -> List[str]:
    """argv with the invocation JSON's input types restored (unchanged without an inputs
    spec), and a moved executor class named by its new path."""
    argv = list(argv)
    invocation_at = _value_index(argv, INVOCATION_FLAG)
    spec_at = _value_index(argv, INPUTS_SPEC_FLAG)
    if invocation_at is not None and spec_at is not None:
        argv[invocation_at] = json.dumps(restore_types(json.loads(argv[invocation_at]),
                                                       json.loads(argv[spec_at])))
    executor_at = _value_index(argv, EXECUTOR_FLAG)
    if executor_at is not None:
        argv[executor_at] = MOVED_EXECUTORS.get(argv[executor_at], argv[executor_at])
    return argv


def main(argv: Optional[List[str]] = None) -> None:
    """Runs TFX's v2 executor entrypoint on the restored arguments."""
    from core import startup
    startup.prepare()  # before TensorFlow: Keras 2 for TFX
    from absl import app
    from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor as tfx_entry

    from core import tfx_internals
    app.run(tfx_entry.main, argv=with_restored_types(sys.argv if argv is None else argv),
            flags_parser=tfx_internals.v2_entrypoint_flags_parser())


if __name__ == "__main__":
    main()
