"""A local output as three LocalDagRunner runs and a rollback leave it: artifact folders
under `<root>/<component>/<key>/<execution id>/`, their records in ML Metadata (TFX's
artifact types and context types), and two pushed versions.

    run-1: ExampleGen -> examples; Trainer -> model (pushed as version 100); Evaluator
    run-2: the same, the Trainer warm-started from run-1's model; a rollback revoked its model
    run-3: the same, from run-2's model, which is also the Evaluator's baseline (version 300)
    Trainer/model/<unfinished>: a killed run's output, of an execution still RUNNING
    Trainer/model/777: a folder no record and no execution names (left alone)
"""
import dataclasses
import os
from typing import Dict, List

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd

from components.image_pusher.versions import publish
from core.storage import files
from settings.config import PipelineConfig

VERSIONS = {100: "run-1", 300: "run-3"}  # version -> the run whose model it is


@dataclasses.dataclass
class History:
    """What was recorded: artifact ids by run and name, and the special cases."""

    config: PipelineConfig
    artifacts: Dict[str, Dict[str, int]]  # run -> {"examples", "model", "blessing": id}
    rollback_blessing: int  # the revocation a rollback recorded
    trainer_executions: Dict[str, int]  # run -> the Trainer's execution id
    cache_contexts: Dict[str, int]  # run -> the Trainer's execution_cache context id
    orphan: str  # the killed run's folder
    stranger: str  # the folder nothing names


def open_store(config: PipelineConfig) -> metadata_store.MetadataStore:
    os.makedirs(config.state_path, exist_ok=True)
    connection = mlmd.ConnectionConfig()
    connection.sqlite.filename_uri = config.metadata_path
    connection.sqlite.connection_mode = mlmd.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    return metadata_store.MetadataStore(connection)


class _Recorder:
    """Puts executions with their events and contexts, writes each output's folder."""

    def __init__(self, config: PipelineConfig):
        from tfx.types import standard_artifacts
        self.config, self.store = config, open_store(config)
        self.types = {t.TYPE_NAME: self.store.put_artifact_type(t._get_artifact_type())  # noqa
                      for t in (standard_artifacts.Examples, standard_artifacts.Model,
                                standard_artifacts.ModelBlessing)}
        self.context_types = {name: self.store.put_context_type(mlmd.ContextType(name=name))
                              for name in ("pipeline", "pipeline_run", "execution_cache")}
        self.pipeline = self.context("pipeline", config.run.pipeline_name)

    def context(self, kind: str, name: str) -> mlmd.Context:
        [context_id] = self.store.put_contexts([mlmd.Context(
            type_id=self.context_types[kind], name=name)])
        return self.store.get_contexts_by_id([context_id])[0]

    def execute(self, component: str, inputs: Dict[str, int], outputs: Dict[str, str],
                contexts: List[mlmd.Context], state=mlmd.Execution.COMPLETE) -> tuple:
        """(execution id, {output key: artifact id}); outputs are {key: artifact type}."""
        type_id = self.store.put_execution_type(mlmd.ExecutionType(name=component))
        execution = mlmd.Execution(type_id=type_id, last_known_state=state)
        [execution_id] = self.store.put_executions([execution])
        events = [(self.store.get_artifacts_by_id([i])[0], self._event(mlmd.Event.INPUT, k))
                  for k, i in inputs.items()]
        for key, type_name in outputs.items():
            uri = os.path.join(self.config.pipeline_root, component, key, str(execution_id))
            files.write_bytes(os.path.join(uri, "data.bin"), b"x" * 1000)
            artifact = mlmd.Artifact(type_id=self.types[type_name], uri=uri,
                                     state=mlmd.Artifact.LIVE)
            events.append((artifact, self._event(mlmd.Event.OUTPUT, key)))
        execution.id = execution_id
        _, artifact_ids, _ = self.store.put_execution(execution, events, [self.pipeline,
                                                                          *contexts])
        made = dict(zip([e.path.steps[0].key for _, e in events], artifact_ids))
        return execution_id, {key: made[key] for key in outputs}

    @staticmethod
    def _event(kind, key: str) -> mlmd.Event:
        event = mlmd.Event(type=kind)
        event.path.steps.add().key = key
        return event


def _run(recorder: _Recorder, name: str, base: int, history: History) -> None:
    run = recorder.context("pipeline_run", name)
    _, made = recorder.execute("ImageExampleGen", {}, {"examples": "Examples"}, [run])
    inputs = {"examples": made["examples"], **({"base_model": base} if base else {})}
    cache = recorder.context("execution_cache", f"trainer-{name}")
    trainer, out = recorder.execute("Trainer", inputs, {"model": "Model"}, [run, cache])
    made.update(out)
    judged = {"model": made["model"], **({"baseline_model": base} if base else {})}
    _, out = recorder.execute("Evaluator", judged, {"blessing": "ModelBlessing"}, [run])
    made.update(out)
    history.artifacts[name], history.trainer_executions[name] = made, trainer
    history.cache_contexts[name] = cache.id


def _rollback(recorder: _Recorder, model_id: int) -> int:
    """A revocation, as rollback/revocations.py records it: in the pipeline context only."""
    type_id = recorder.store.put_execution_type(mlmd.ExecutionType(name="imagepipe.Rollback"))
    blessing = mlmd.Artifact(type_id=recorder.types["ModelBlessing"], state=mlmd.Artifact.LIVE,
                             uri=os.path.join(recorder.config.pipeline_root,
                                              "imagepipe.Rollback", "blessing", "1", "1"))
    for name, value in (("blessed", 0), ("revoked", 1), ("current_model_id", model_id)):
        blessing.custom_properties[name].int_value = value
    _, [blessing_id], _ = recorder.store.put_execution(
        mlmd.Execution(type_id=type_id, last_known_state=mlmd.Execution.COMPLETE),
        [(blessing, recorder._event(mlmd.Event.OUTPUT, "blessing"))], [recorder.pipeline])
    return blessing_id


def _bless(store, artifact_id: int, model_id: int) -> None:
    """The Evaluator's custom properties on its blessing."""
    [blessing] = store.get_artifacts_by_id([artifact_id])
    blessing.custom_properties["blessed"].int_value = 1
    blessing.custom_properties["current_model_id"].int_value = model_id
    store.put_artifacts([blessing])


def record_history(config: PipelineConfig, scratch: str) -> History:
    """Lays out the runs, the rollback, the leftovers and the pushed versions."""
    recorder = _Recorder(config)
    history = History(config, {}, 0, {}, {}, "", "")
    base = 0
    for name in ("run-1", "run-2", "run-3"):
        _run(recorder, name, base, history)
        base = history.artifacts[name]["model"]
        _bless(recorder.store, history.artifacts[name]["blessing"], base)
    history.rollback_blessing = _rollback(recorder, history.artifacts["run-2"]["model"])
    killed, _ = recorder.execute("Trainer", {}, {}, [recorder.context("pipeline_run", "run-4")],
                                 state=mlmd.Execution.RUNNING)
    history.orphan = os.path.join(config.pipeline_root, "Trainer", "model", str(killed))
    history.stranger = os.path.join(config.pipeline_root, "Trainer", "model", "777")
    for folder in (history.orphan, history.stranger):
        files.write_bytes(os.path.join(folder, "data.bin"), b"x" * 500)
    model = os.path.join(scratch, "trained")
    files.write_bytes(os.path.join(model, "saved_model.pb"), b"graph")
    for version, run in VERSIONS.items():
        uri = recorder.store.get_artifacts_by_id([history.artifacts[run]["model"]])[0].uri
        publish(model, config.serving_dir, version, source_uri=uri, record={"spans": [1]})
    return history
