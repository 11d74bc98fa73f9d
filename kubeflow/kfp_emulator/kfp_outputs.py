"""A finished task's outputs as the KFP 2.4 launcher records them, and so as later tasks see them.

- Each output artifact is the one the driver provisioned, with the URI and the
  metadata fields the executor output file gives merged in
  (launcher_v2 uploadOutputArtifacts, mergeRuntimeArtifacts): TFX's
  kubeflow_v2_run_executor writes every property and custom property there.
- MLMD stores the metadata as custom properties (metadata/converter.go
  toMLMDArtifact, StructValueToMLMDValue: a bool becomes 0 or 1, a list
  {"list": ...}, a struct {"struct": ...}, a null fails the task), adds
  `display_name` (client.go RecordArtifact), and hands them on as metadata,
  numbers as doubles, with the artifact's id as its name (toRuntimeArtifact).
- Output parameters are read as kfp.local reads them (the executor output's
  values, and files written through dsl.OutputPath).
"""
from typing import Any, Dict, List

from google.protobuf import json_format, struct_pb2
from kfp.local import executor_output_utils
from kfp.pipeline_spec import pipeline_spec_pb2 as pb


def recorded(executor_input: pb.ExecutorInput, component: pb.ComponentSpec,
             ids: List[int]) -> Dict[str, Any]:
    """{"artifacts": {key: {name, uri, metadata}}, "parameters": {key: value}}.

    `ids` holds one fresh artifact id per output artifact. Raises ValueError
    where MLMD cannot hold a metadata value.
    """
    written = executor_output_utils.load_executor_output(executor_input.outputs.output_file)
    artifacts = {}
    for key, artifact_id in zip(executor_input.outputs.artifacts, ids):
        artifact = pb.RuntimeArtifact()
        artifact.CopyFrom(executor_input.outputs.artifacts[key].artifacts[0])
        if key in written.artifacts and written.artifacts[key].artifacts:
            _merge(written.artifacts[key].artifacts[0], artifact)
        artifacts[key] = {"name": str(artifact_id), "uri": artifact.uri,
                          "metadata": through_mlmd(key, artifact.metadata)}
    values = executor_output_utils.get_outputs_for_task(executor_input, component)
    parameters = {key: values[key] for key in component.output_definitions.parameters
                  if key in values}
    return {"artifacts": artifacts, "parameters": parameters}


def _merge(source: pb.RuntimeArtifact, target: pb.RuntimeArtifact) -> None:
    if source.uri:
        target.uri = source.uri
    for key, value in source.metadata.fields.items():
        target.metadata.fields[key].CopyFrom(value)


def through_mlmd(output_key: str, metadata: struct_pb2.Struct) -> Dict[str, Any]:
    """The metadata a downstream task reads back from MLMD."""
    kept = {}
    for key, value in json_format.MessageToDict(metadata).items():
        if isinstance(value, (bool, int, float)):  # a bool is recorded as 0 or 1
            kept[key] = float(value)
        elif isinstance(value, str):
            kept[key] = value
        elif isinstance(value, list):
            kept[key] = {"list": value}
        elif isinstance(value, dict):
            kept[key] = {"struct": value}
        else:
            raise ValueError(f"output {output_key}: metadata {key!r} is null, which KFP's "
                             "launcher cannot record in ML Metadata")
    kept.setdefault("display_name", output_key)
    return kept


def to_runtime_artifact(recorded_artifact: Dict[str, Any]) -> pb.RuntimeArtifact:
    """A recorded artifact as the RuntimeArtifact the next driver resolves."""
    artifact = pb.RuntimeArtifact(name=recorded_artifact["name"], uri=recorded_artifact["uri"])
    artifact.metadata.update(recorded_artifact["metadata"])
    return artifact
