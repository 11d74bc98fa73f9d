"""A rollback, recorded in the local ML Metadata store, where the baseline resolver sees it.

One Execution of type ROLLBACK_TYPE (properties model_name, from_version,
to_version), in the pipeline's context, with one output ModelBlessing per
model whose service changed: `blessed` 0 and `revoked` 1 for each model taken
out of service, `blessed` 1 and `revoked` 0 for a rolled-back model served
again; `current_model_id` names the Model artifact, found by the URI the
version's provenance records. TFX's resolvers read the outputs of every
execution in the pipeline context that are LIVE, so the next run's
LatestBlessedOtherModelStrategy (components/resolvers/) sees them.
"""
import os
import time
from typing import Dict, List, Optional, Tuple

from ml_metadata import errors, metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd

from components.resolvers.latest_blessed_other import BLESSED, CURRENT_MODEL_ID, REVOKED

ROLLBACK_TYPE = "imagepipe.Rollback"
PIPELINE_CONTEXT = "pipeline"  # TFX's context type for a pipeline (tfx/dsl/compiler/constants.py)
BLESSING_KEY = "blessing"  # the output key on the rollback's events


def open_store(metadata_path: str) -> metadata_store.MetadataStore:
    """The SQLite store, writable (it must exist: a run made it)."""
    connection = mlmd.ConnectionConfig()
    connection.sqlite.filename_uri = metadata_path
    connection.sqlite.connection_mode = mlmd.SqliteMetadataSourceConfig.READWRITE
    return metadata_store.MetadataStore(connection)


def _type_id(store, name: str) -> Optional[int]:
    try:
        return store.get_artifact_type(name).id
    except errors.NotFoundError:  # no run ever made one
        return None


def find_models(store, source_uris: Dict[int, str]) -> Dict[int, mlmd.Artifact]:
    """{version: its Model artifact}, by the URI in each version's provenance; versions
    pushed from elsewhere (another store, by hand) are left out."""
    model_type = _type_id(store, "Model")
    found = {}
    for version, uri in source_uris.items():
        models = [a for a in store.get_artifacts_by_uri(uri) if a.type_id == model_type]
        if models:
            found[version] = max(models, key=lambda a: a.id)
    return found


def _blessing(type_id: int, uri: str, model: mlmd.Artifact, version: int,
              revoked: bool) -> mlmd.Artifact:
    blessing = mlmd.Artifact(type_id=type_id, uri=uri, state=mlmd.Artifact.LIVE)
    values = {BLESSED: int(not revoked), CURRENT_MODEL_ID: model.id, REVOKED: int(revoked),
              "pushed_version": version}
    for name, value in values.items():
        blessing.custom_properties[name].int_value = value
    blessing.custom_properties["current_model"].string_value = model.uri
    return blessing


def _execution(store, model_name: str, versions: Tuple[int, int]) -> mlmd.Execution:
    type_id = store.put_execution_type(mlmd.ExecutionType(
        name=ROLLBACK_TYPE, properties={"model_name": mlmd.STRING, "from_version": mlmd.INT,
                                        "to_version": mlmd.INT}), can_add_fields=True)
    execution = mlmd.Execution(type_id=type_id, last_known_state=mlmd.Execution.COMPLETE)
    execution.properties["model_name"].string_value = model_name
    execution.properties["from_version"].int_value = versions[0]
    execution.properties["to_version"].int_value = versions[1]
    return execution


def record_rollback(store, pipeline_name: str, pipeline_root: str, model_name: str,
                    versions: Tuple[int, int],
                    changed: List[Tuple[int, mlmd.Artifact, bool]]) -> int:
    """Records one rollback, in one transaction; returns the execution's id.

    `versions`: (from, to); `changed`: (version, its Model artifact, revoked?)
    for each model whose service the rollback changed.
    """
    blessing_type = _type_id(store, "ModelBlessing")
    if blessing_type is None:  # no Evaluator ever ran, so no model to revoke
        changed = []
    folder = os.path.join(pipeline_root, ROLLBACK_TYPE, BLESSING_KEY, str(int(time.time() * 1e3)))
    outputs = []
    for index, (version, model, revoked) in enumerate(changed):
        event = mlmd.Event(type=mlmd.Event.OUTPUT)
        event.path.steps.add().key = BLESSING_KEY
        event.path.steps.add().index = index
        outputs.append((_blessing(blessing_type, os.path.join(folder, str(model.id)), model,
                                  version, revoked), event))
    try:
        contexts = [store.get_context_by_type_and_name(PIPELINE_CONTEXT, pipeline_name)]
    except errors.NotFoundError:
        contexts = []
    contexts = [c for c in contexts if c is not None]
    execution_id, _, _ = store.put_execution(_execution(store, model_name, versions), outputs,
                                             contexts)
    return execution_id
