"""A local output's ML Metadata: which artifacts the kept models' runs need, and marking
the deleted ones DELETED.

What a kept version needs: its Model artifact (the `source_uri` its provenance records)
and everything its run read, resolved or wrote, so that the run can be audited or run
again: the pipeline-run context(s) of each execution that output the Model (a cached
re-run outputs it again, in its own run), and every artifact of every event of every
execution in them (examples, schema, statistics, transform graph, the warm start's base
model, the baseline, evaluation and blessings). The newest run is kept the same way.

Why DELETED: TFX resolves channels to LIVE artifacts only
(tfx/orchestration/portable/input_resolution/channel_resolver.py), and its cache refuses
an execution whose outputs are not all LIVE (tfx/orchestration/portable/cache_utils.py),
so the baseline and warm-start resolvers (components/resolvers/) skip a deleted model
and a cached step whose outputs are gone runs again. Only outputs of this pipeline's
runs are candidates: a rollback's ModelBlessings (rollback/revocations.py), which hold
the revocations, are produced by no run and stay LIVE.
"""
import dataclasses
from typing import Dict, Iterable, List, Set, Tuple

from ml_metadata.proto import metadata_store_pb2 as mlmd
from tfx.dsl.compiler.constants import (PIPELINE_CONTEXT_TYPE_NAME as PIPELINE_CONTEXT,
                                        PIPELINE_RUN_CONTEXT_TYPE_NAME as RUN_CONTEXT)

from retention.inventory import Records

# PENDING_OUTPUT: an output registered before its execution ran, which may never finish.
_OUTPUTS = (mlmd.Event.OUTPUT, mlmd.Event.DECLARED_OUTPUT, mlmd.Event.PENDING_OUTPUT)
_FINISHED = (mlmd.Execution.COMPLETE, mlmd.Execution.CACHED)


@dataclasses.dataclass(frozen=True)
class Lineage:
    """The records, and {artifact URI: why it is kept} for the kept versions' lineage and
    the newest run."""

    records: Records
    kept: Dict[str, str]


@dataclasses.dataclass(frozen=True)
class _History:
    """One pipeline's executions in the store: runs, events, artifacts."""

    runs: Dict[int, Tuple[str, Set[int]]]  # run context id -> (its name, execution ids)
    events: List[mlmd.Event]
    artifacts: Dict[int, mlmd.Artifact]

    def artifact_ids(self, executions: Set[int]) -> Set[int]:
        return {e.artifact_id for e in self.events if e.execution_id in executions}

    def producers(self) -> Dict[int, Set[int]]:
        """{artifact id: the executions that output it}."""
        found: Dict[int, Set[int]] = {}
        for event in self.events:
            if event.type in _OUTPUTS:
                found.setdefault(event.artifact_id, set()).add(event.execution_id)
        return found


def _uri(artifact: mlmd.Artifact) -> str:
    return artifact.uri.rstrip("/")


def _read_history(store, pipeline_id: int) -> _History:
    executions = {e.id for e in store.get_executions_by_context(pipeline_id)}
    runs = {}
    for context in store.get_contexts_by_type(RUN_CONTEXT):
        ids = {e.id for e in store.get_executions_by_context(context.id)} & executions
        if ids:
            runs[context.id] = (context.name, ids)
    events = list(store.get_events_by_execution_ids(sorted(executions))) if executions else []
    ids = sorted({e.artifact_id for e in events})
    artifacts = {a.id: a for a in store.get_artifacts_by_id(ids)} if ids else {}
    return _History(runs, events, artifacts)


def _records(history: _History, known: Iterable[str], unfinished: Iterable[int]) -> Records:
    """This pipeline's run outputs: artifacts that only run executions output."""
    in_runs = set().union(*(ids for _, ids in history.runs.values()))
    ours: Dict[str, List[int]] = {}
    for artifact_id, producers in history.producers().items():
        artifact = history.artifacts.get(artifact_id)
        if artifact is None or not producers <= in_runs:
            continue
        live = ours.setdefault(_uri(artifact), [])
        if artifact.state != mlmd.Artifact.DELETED:
            live.append(artifact_id)
    return Records({uri: tuple(ids) for uri, ids in ours.items()}, frozenset(known),
                   frozenset(unfinished))


def _keep_runs(history: _History, runs: Iterable[int], why: str,
               kept: Dict[str, str]) -> None:
    for run in sorted(runs):
        name, executions = history.runs[run]
        for artifact_id in history.artifact_ids(executions):
            artifact = history.artifacts.get(artifact_id)
            if artifact is not None:
                kept.setdefault(_uri(artifact), f"{why} (run {name})")


def _runs_of(history: _History, uri: str) -> Set[int]:
    """The runs with an execution that output an artifact at `uri`."""
    producers = history.producers()
    executions = set().union(*(producers.get(a.id, set()) for a in history.artifacts.values()
                               if _uri(a) == uri.rstrip("/")))
    return {run for run, (_, ids) in history.runs.items() if ids & executions}


def lineage_of(store, pipeline_name: str, sources: Dict[int, str]) -> Lineage:
    """The lineage of the kept versions (`sources`: version -> source_uri) and of the
    newest run of `pipeline_name`, from an open ML Metadata store."""
    known = [_uri(a) for a in store.get_artifacts()]
    unfinished = [e.id for e in store.get_executions() if e.last_known_state not in _FINISHED]
    pipeline = store.get_context_by_type_and_name(PIPELINE_CONTEXT, pipeline_name)
    if pipeline is None:
        return Lineage(Records({}, frozenset(known), frozenset(unfinished)), {})
    history = _read_history(store, pipeline.id)
    kept: Dict[str, str] = {}
    for version, uri in sorted(sources.items(), reverse=True):
        if uri:
            _keep_runs(history, _runs_of(history, uri), f"lineage of version {version}", kept)
    if history.runs:
        _keep_runs(history, [max(history.runs)], "the newest run", kept)
    return Lineage(_records(history, known, unfinished), kept)


def pipeline_names(store) -> List[str]:
    """The pipelines the store records runs of."""
    return sorted(c.name for c in store.get_contexts_by_type(PIPELINE_CONTEXT))


def mark_deleted(store, artifact_ids: Iterable[int]) -> int:
    """Sets the artifacts' state to DELETED, in one call; returns how many."""
    ids = sorted(set(artifact_ids))
    if not ids:
        return 0
    artifacts = list(store.get_artifacts_by_id(ids))
    for artifact in artifacts:
        artifact.state = mlmd.Artifact.DELETED
    store.put_artifacts(artifacts)
    return len(artifacts)
