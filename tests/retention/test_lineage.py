"""A local output's gc: the kept versions' lineage from ML Metadata, the deleted artifacts
marked DELETED, and TFX then resolving and caching LIVE artifacts only, so the baseline
and warm-start resolvers skip what gc deleted (local_history.py lays the output out)."""
import os

import pytest
from ml_metadata.proto import metadata_store_pb2 as mlmd

from retention.lineage import lineage_of
from retention.sweep import carry_out, plan_gc
from settings.command_sections import RetentionSettings
from settings.config import PipelineConfig
from tests.retention.local_history import open_store, record_history

KEEP_ONE = RetentionSettings(keep_versions=1, min_age="0")


@pytest.fixture
def history(tmp_path):
    config = PipelineConfig.from_values(output=str(tmp_path / "out"))
    return record_history(config, str(tmp_path / "scratch"))


def _uris(store, ids) -> set:
    return {a.uri for a in store.get_artifacts_by_id(list(ids))}


def _state(store, artifact_id: int) -> int:
    return store.get_artifacts_by_id([artifact_id])[0].state


def test_a_kept_versions_lineage_is_its_whole_run_and_what_that_run_read(history):
    store = open_store(history.config)
    source = _uris(store, [history.artifacts["run-3"]["model"]]).pop()
    lineage = lineage_of(store, "imagepipe", {300: source})
    run3, run2 = history.artifacts["run-3"], history.artifacts["run-2"]
    for uri in _uris(store, list(run3.values()) + [run2["model"]]):
        assert lineage.kept[uri].startswith("lineage of version 300 (run run-3)")
    assert not _uris(store, history.artifacts["run-1"].values()) & set(lineage.kept)
    assert not _uris(store, [run2["examples"], run2["blessing"]]) & set(lineage.kept)


def test_a_rollbacks_blessings_are_never_candidates(history):
    store = open_store(history.config)
    lineage = lineage_of(store, "imagepipe", {})
    revocation = _uris(store, [history.rollback_blessing]).pop()
    assert revocation not in lineage.records.ours
    assert revocation in lineage.records.known


def test_gc_deletes_older_runs_marks_them_deleted_and_keeps_the_rest_live(history):
    config = history.config
    plan = plan_gc(config, KEEP_ONE)
    doomed = {d.unit.path for d in plan.doomed}
    store = open_store(config)
    run1, run2 = history.artifacts["run-1"], history.artifacts["run-2"]
    older = _uris(store, list(run1.values()) + [run2["examples"], run2["blessing"]])
    assert older | {history.orphan, os.path.join(config.serving_dir, "100")} == doomed
    assert carry_out(plan, config) == len(older)
    assert not any(os.path.exists(path) for path in doomed)
    assert os.path.exists(history.stranger)  # no record and no unfinished execution names it
    store = open_store(config)
    for artifact_id in list(run1.values()) + [run2["examples"], run2["blessing"]]:
        assert _state(store, artifact_id) == mlmd.Artifact.DELETED
    kept = list(history.artifacts["run-3"].values()) + [run2["model"],
                                                        history.rollback_blessing]
    assert all(_state(store, i) == mlmd.Artifact.LIVE for i in kept)


def _resolve(config, type_name: str) -> list:
    """What TFX's resolver node gets for Channel(type=...): the pipeline context's outputs."""
    from tfx.orchestration import metadata
    from tfx.orchestration.portable.input_resolution import channel_resolver
    from tfx.proto.orchestration import pipeline_pb2
    channel = pipeline_pb2.InputSpec.Channel()
    query = channel.context_queries.add()
    query.type.name = "pipeline"
    query.name.field_value.string_value = config.run.pipeline_name
    channel.artifact_query.type.name = type_name
    with metadata.Metadata(metadata.sqlite_metadata_connection_config(
            config.metadata_path)) as handle:
        return channel_resolver.resolve_single_channel(handle, channel)


def test_resolvers_see_live_artifacts_only_so_no_deleted_model_is_a_baseline(history):
    """With run-3's model the candidate, and run-2's revoked by a rollback, the baseline
    resolver's strategy picks run-1's model; once gc deleted it, none."""
    from components.resolvers.latest_blessed_other import pick_baseline
    config = history.config
    run1, candidate = history.artifacts["run-1"], [history.artifacts["run-3"]["model"]]

    def baseline() -> list:
        picked = pick_baseline(_resolve(config, "Model"), _resolve(config, "ModelBlessing"),
                               exclude_ids=candidate)
        return [m.id for m in picked["model"]]
    assert baseline() == [run1["model"]]
    carry_out(plan_gc(config, KEEP_ONE), config)
    assert run1["model"] not in {m.id for m in _resolve(config, "Model")}
    assert run1["blessing"] not in {b.id for b in _resolve(config, "ModelBlessing")}
    assert baseline() == []


def test_tfxs_cache_refuses_an_execution_whose_outputs_were_marked_deleted(history):
    from tfx.orchestration import metadata
    from tfx.orchestration.portable import cache_utils
    config = history.config

    def cached(run: str):
        with metadata.Metadata(metadata.sqlite_metadata_connection_config(
                config.metadata_path)) as handle:
            [context] = handle.store.get_contexts_by_id([history.cache_contexts[run]])
            return cache_utils.get_cached_outputs(handle, context)
    assert cached("run-1") is not None and cached("run-3") is not None
    plan = plan_gc(config, KEEP_ONE)
    from retention.lineage import mark_deleted  # records only: the files are still there
    mark_deleted(open_store(config), [i for d in plan.doomed for i in d.unit.artifact_ids])
    assert cached("run-1") is None  # the step would run again
    assert cached("run-3") is not None
