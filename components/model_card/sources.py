"""What a model card is made from, read from the Pusher's inputs; each part may be absent.

The Evaluator's audit (`<blessing>/audit.json`), the Examples' ingest report
(its "data_health" and "drift"), the SavedModel (labels, input shape, the
Keras model's name) and the Trainer's fit_stats.json. A part that cannot be
read is None, and the card says "not measured": an older run, a failed
audit or another ExampleGen must never stop a push.
"""
import dataclasses
import json
import logging
import os
from typing import List, Optional

from core.contract import (ASSETS_EXTRA, AUDIT_FILE, LABELS_FILE, PIXELS_INPUT,
                           SERVING_TENSOR, read_labels)
from components.image_pusher.provenance import fit_stats_path
from core.storage import files


@dataclasses.dataclass(frozen=True)
class CardSources:
    """The inputs of card.build_card, read once by the executor."""

    name: str  # the served model's name (the push destination's folder)
    source_uri: str  # the Model artifact's URI
    labels: List[str]
    input_shape: Optional[List[int]]  # [size, size, channels]; None: unreadable
    architecture: Optional[str]  # the Keras model's name (mnist_cnn, mobilenet_v2_classifier)
    training: Optional[dict]  # fit_stats.json: epochs_run, epochs_planned, warm_start, ...
    record: dict  # the push's provenance fields: spans, accuracy, drift_overridden
    audit: Optional[dict]  # audit.json; None: not measured
    report: dict  # the ingest report; {}: none (its data_health and drift may be absent)


def read_card_sources(name: str, model_path: str, model_uri: str, blessing_uri: Optional[str],
                      report: dict, record: dict) -> CardSources:
    """Reads every part it can; logs, never raises, for a part it cannot."""
    extra = os.path.join(model_path, ASSETS_EXTRA)
    return CardSources(
        name=name, source_uri=model_uri,
        labels=_quietly(lambda: read_labels(os.path.join(extra, LABELS_FILE))) or [],
        input_shape=_quietly(lambda: _input_shape(model_path)),
        architecture=_quietly(lambda: _architecture(model_path)),
        training=_quietly(lambda: _read_json(fit_stats_path(model_uri))),
        record=dict(record or {}), report=dict(report or {}),
        audit=_quietly(lambda: _read_json(os.path.join(blessing_uri, AUDIT_FILE)))
        if blessing_uri else None)


def _quietly(read):
    try:
        return read()
    except Exception as e:  # noqa: BLE001  (a card part, never the push)
        logging.warning("model card: a part could not be read (%s: %s); it says "
                        "'not measured'", type(e).__name__, e)
        return None


def _read_json(path: str) -> Optional[dict]:
    return json.loads(files.read_text(path)) if files.exists(path) else None


def _input_shape(model_path: str) -> Optional[List[int]]:
    """[size, size, channels] of serving_tensor's pixels, from saved_model.pb (no load)."""
    from tensorflow.core.protobuf import saved_model_pb2
    saved = saved_model_pb2.SavedModel.FromString(
        files.read_bytes(os.path.join(model_path, "saved_model.pb")))
    for graph in saved.meta_graphs:
        if SERVING_TENSOR in graph.signature_def:
            shape = graph.signature_def[SERVING_TENSOR].inputs[PIXELS_INPUT].tensor_shape
            return [int(d.size) for d in shape.dim][1:]
    return None


def _architecture(model_path: str) -> Optional[str]:
    """The Keras model's name, from keras_metadata.pb (the SavedModel's root node)."""
    path = os.path.join(model_path, "keras_metadata.pb")
    if not files.exists(path):
        return None
    from tf_keras.protobuf import saved_metadata_pb2
    metadata = saved_metadata_pb2.SavedMetadata.FromString(files.read_bytes(path))
    for node in metadata.nodes:
        if node.node_path == "root":
            return json.loads(node.metadata).get("name")
    return None
