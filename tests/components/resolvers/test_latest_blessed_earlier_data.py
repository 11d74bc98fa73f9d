"""The warm-start resolver against a real ML Metadata store (in memory)."""
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2 as pb
from tfx.types import standard_artifacts

from components.resolvers.latest_blessed_earlier_data import (EXAMPLES,
                                                     LatestBlessedEarlierDataModelStrategy,
                                                     trained_on)


def _store():
    config = pb.ConnectionConfig()
    config.fake_database.SetInParent()
    return metadata_store.MetadataStore(config)


def _put(store, artifact):
    artifact.type_id = store.put_artifact_type(artifact.artifact_type)
    artifact.id = store.put_artifacts([artifact.mlmd_artifact])[0]
    return artifact


def _train(store, examples, model):
    """A Trainer execution reading `examples` and writing `model`."""
    execution_type = store.put_execution_type(pb.ExecutionType(name="Trainer"))
    execution = store.put_executions([pb.Execution(type_id=execution_type)])[0]
    store.put_events([pb.Event(artifact_id=examples.id, execution_id=execution,
                               type=pb.Event.INPUT),
                      pb.Event(artifact_id=model.id, execution_id=execution,
                               type=pb.Event.OUTPUT)])


def _blessing(store, model):
    blessing = standard_artifacts.ModelBlessing()
    blessing.set_int_custom_property("blessed", 1)
    blessing.set_int_custom_property("current_model_id", model.id)
    return _put(store, blessing)


def test_skips_models_trained_on_this_runs_examples():
    store = _store()
    old_data, new_data = (_put(store, standard_artifacts.Examples()) for _ in range(2))
    old_model, new_model = (_put(store, standard_artifacts.Model()) for _ in range(2))
    _train(store, old_data, old_model)
    _train(store, new_data, new_model)
    blessings = [_blessing(store, old_model), _blessing(store, new_model)]
    assert trained_on(store, [old_model, new_model], {new_data.id}) == [new_model.id]

    strategy = LatestBlessedEarlierDataModelStrategy()
    # A re-run on the data that trained new_model: it starts from old_model, as before.
    again = strategy.resolve_artifacts(store, {"model": [old_model, new_model],
                                               "model_blessing": blessings,
                                               EXAMPLES: [new_data]})
    assert [m.id for m in again["model"]] == [old_model.id]
    assert again[EXAMPLES] == [new_data]
    # New data: the newest blessed model.
    newer = _put(store, standard_artifacts.Examples())
    fresh = strategy.resolve_artifacts(store, {"model": [old_model, new_model],
                                               "model_blessing": blessings, EXAMPLES: [newer]})
    assert [m.id for m in fresh["model"]] == [new_model.id]


def test_nothing_blessed_resolves_nothing():
    store = _store()
    data = _put(store, standard_artifacts.Examples())
    result = LatestBlessedEarlierDataModelStrategy().resolve_artifacts(
        store, {"model": [], "model_blessing": [], EXAMPLES: [data]})
    assert result["model"] == [] and result["model_blessing"] == []
