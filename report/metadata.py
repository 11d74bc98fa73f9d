"""Reading a local run back from its ML Metadata store (SQLite): runs, executions, outputs.

The summary, `imagepipe runs`, the report and the local runner's progress
lines all read the store through these helpers.
"""
import os
from typing import Dict, Optional

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2

from settings.config import PipelineConfig

State = metadata_store_pb2.Execution.State


def open_store(config: PipelineConfig) -> metadata_store.MetadataStore:
    """The run's SQLite MLMD store (it must exist)."""
    connection = metadata_store_pb2.ConnectionConfig()
    connection.sqlite.filename_uri = config.metadata_path
    connection.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READONLY
    return metadata_store.MetadataStore(connection)


def node_id(store, execution, pipeline_name: str) -> Optional[str]:
    for context in store.get_contexts_by_execution(execution.id):
        if context.type == "node" and context.name.startswith(pipeline_name + "."):
            return context.name[len(pipeline_name) + 1:]
    return None


def latest_run(store, pipeline_name: str) -> Dict[str, metadata_store_pb2.Execution]:
    """{node id: execution} of the newest run of `pipeline_name`, in execution order."""
    runs = sorted(store.get_contexts_by_type("pipeline_run"), key=lambda c: c.id, reverse=True)
    for run in runs:
        executions = sorted(store.get_executions_by_context(run.id), key=lambda e: e.id)
        nodes = {node_id(store, e, pipeline_name): e for e in executions}
        nodes.pop(None, None)
        if nodes:
            return nodes
    return {}


def was_cached(config: PipelineConfig, node: str) -> bool:
    """Whether `node`'s execution in the latest run was a cache hit."""
    execution = latest_run(open_store(config), config.run.pipeline_name).get(node)
    return execution is not None and execution.last_known_state == State.CACHED


def failed_component(config: PipelineConfig) -> str:
    """The id of the component that failed in the latest run, as MLMD recorded it."""
    if not os.path.exists(config.metadata_path):
        return "pipeline set-up"
    for node, execution in latest_run(open_store(config), config.run.pipeline_name).items():
        if execution.last_known_state == State.FAILED:
            return node
    return "an unrecorded step"


def outputs(store, execution) -> Dict[str, metadata_store_pb2.Artifact]:
    """{artifact type name: artifact} of an execution's outputs."""
    ids = [e.artifact_id for e in store.get_events_by_execution_ids([execution.id])
           if e.type == metadata_store_pb2.Event.OUTPUT]
    types = {t.id: t.name for t in store.get_artifact_types()}
    return {types[a.type_id]: a for a in store.get_artifacts_by_id(ids)}


def prop(artifact, name: str):
    value = artifact.custom_properties.get(name)
    if value is None:
        return None
    return value.int_value if value.HasField("int_value") else value.string_value
