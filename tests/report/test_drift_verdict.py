"""The summary's drift verdict comes from the Evaluator's blessing, else from the
DistributionValidator's drift.json; never from the ingest report."""
import json

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2

from core.contract import DRIFT_FILE, DRIFT_VALIDATOR_ID, EVALUATOR_ID
from report.summary import drift_verdict

VERDICT = {"verdict": "drift", "span": 3, "previous_span": 2, "drifted": ["brightness"],
           "features": {}}


def _store():
    config = metadata_store_pb2.ConnectionConfig()
    config.fake_database.SetInParent()
    return metadata_store.MetadataStore(config)


def _execution_with_output(store, type_name: str, uri: str, properties: dict):
    """An execution with one output artifact of `type_name`, its string custom properties."""
    artifact_type = metadata_store_pb2.ArtifactType(name=type_name)
    execution_type = metadata_store_pb2.ExecutionType(name=f"{type_name}Step")
    artifact = metadata_store_pb2.Artifact(type_id=store.put_artifact_type(artifact_type),
                                           uri=uri)
    for key, value in properties.items():
        artifact.custom_properties[key].string_value = value
    execution = metadata_store_pb2.Execution(
        type_id=store.put_execution_type(execution_type))
    [execution.id] = store.put_executions([execution])
    [artifact_id] = store.put_artifacts([artifact])
    store.put_events([metadata_store_pb2.Event(
        artifact_id=artifact_id, execution_id=execution.id,
        type=metadata_store_pb2.Event.OUTPUT)])
    return execution


def test_the_evaluators_record_comes_first(tmp_path):
    store = _store()
    (tmp_path / DRIFT_FILE).write_text(json.dumps({**VERDICT, "verdict": "ok"}))
    nodes = {EVALUATOR_ID: _execution_with_output(store, "ModelBlessing", "/b",
                                                  {"drift": json.dumps(VERDICT)}),
             DRIFT_VALIDATOR_ID: _execution_with_output(store, "ExampleAnomalies",
                                                        str(tmp_path), {})}
    assert drift_verdict(store, nodes) == VERDICT


def test_without_an_evaluator_the_validators_file_is_read(tmp_path):
    store = _store()
    (tmp_path / DRIFT_FILE).write_text(json.dumps(VERDICT))
    nodes = {DRIFT_VALIDATOR_ID: _execution_with_output(store, "ExampleAnomalies",
                                                        str(tmp_path), {})}
    assert drift_verdict(store, nodes) == VERDICT


def test_without_either_there_is_no_verdict():
    store = _store()
    nodes = {EVALUATOR_ID: _execution_with_output(store, "ModelBlessing", "/b", {})}
    assert drift_verdict(store, nodes) is None and drift_verdict(store, {}) is None
