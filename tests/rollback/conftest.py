"""An output with pushed versions, and an ML Metadata store holding their models as a
local run records them."""
import dataclasses

import pytest

from settings.config import PipelineConfig
from tests.rollback.pushes import lay_out


@dataclasses.dataclass
class Pushed:
    config: PipelineConfig
    source_uris: dict  # version -> the Model artifact's URI


@pytest.fixture
def pushed(tmp_path) -> Pushed:
    """Three pushed versions (pushes.py VERSIONS) under tmp_path/out, no ML Metadata store."""
    config = PipelineConfig.from_values(output=str(tmp_path / "out"), model_name="digits")
    return Pushed(config, lay_out(config, str(tmp_path)))


def _connection(path: str):
    from ml_metadata.proto import metadata_store_pb2 as mlmd
    connection = mlmd.ConnectionConfig()
    connection.sqlite.filename_uri = path
    connection.sqlite.connection_mode = mlmd.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    return connection


def _output_of(store, context, type_name: str, artifacts) -> list:
    """One execution in the pipeline's context whose outputs are `artifacts`."""
    from ml_metadata.proto import metadata_store_pb2 as mlmd
    type_id = store.put_execution_type(mlmd.ExecutionType(name=type_name))
    events = []
    for artifact in artifacts:
        event = mlmd.Event(type=mlmd.Event.OUTPUT)
        event.path.steps.add().key = "output"
        events.append((artifact, event))
    _, ids, _ = store.put_execution(
        mlmd.Execution(type_id=type_id, last_known_state=mlmd.Execution.COMPLETE), events,
        [context])
    return ids


def record_runs(config: PipelineConfig, uris: dict) -> dict:
    """{version: Model artifact id}: a Trainer output and a blessing per version, in the
    pipeline context, with TFX's own artifact types, as LocalDagRunner records them."""
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2 as mlmd
    from tfx.types import standard_artifacts
    store = metadata_store.MetadataStore(_connection(config.metadata_path))
    model_type, blessing_type = (store.put_artifact_type(t._get_artifact_type())  # noqa: SLF001
                                 for t in (standard_artifacts.Model,
                                           standard_artifacts.ModelBlessing))
    context_type = store.put_context_type(mlmd.ContextType(name="pipeline"))
    [context_id] = store.put_contexts([mlmd.Context(type_id=context_type,
                                                    name=config.run.pipeline_name)])
    context = store.get_contexts_by_id([context_id])[0]
    models = {}
    for version, uri in uris.items():
        model = mlmd.Artifact(type_id=model_type, uri=uri, state=mlmd.Artifact.LIVE)
        [models[version]] = _output_of(store, context, "tfx.components.trainer.Trainer",
                                       [model])
        blessing = mlmd.Artifact(type_id=blessing_type, uri=uri + "-blessing",
                                 state=mlmd.Artifact.LIVE)
        blessing.custom_properties["blessed"].int_value = 1
        blessing.custom_properties["current_model_id"].int_value = models[version]
        _output_of(store, context, "tfx.components.evaluator.Evaluator", [blessing])
    return models


def resolve(config: PipelineConfig, type_name: str) -> list:
    """What TFX's resolver node gets for a Channel(type=...) with no producer: the LIVE
    outputs of the pipeline context's executions (tfx channel_resolver)."""
    from tfx.orchestration import metadata
    from tfx.orchestration.portable.input_resolution import channel_resolver
    from tfx.proto.orchestration import pipeline_pb2
    channel = pipeline_pb2.InputSpec.Channel()
    query = channel.context_queries.add()
    query.type.name = "pipeline"
    query.name.field_value.string_value = config.run.pipeline_name
    channel.artifact_query.type.name = type_name
    with metadata.Metadata(_connection(config.metadata_path)) as handle:
        return channel_resolver.resolve_single_channel(handle, channel)


@pytest.fixture
def recorded(pushed) -> dict:
    """The pushed versions' models and blessings in ML Metadata: {version: model id}."""
    return record_runs(pushed.config, pushed.source_uris)


@pytest.fixture
def resolved():
    """`resolve(config, type name)`, as a fixture (test modules are not importable)."""
    return resolve
