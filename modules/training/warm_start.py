"""Warm start: train from the last blessed model's weights when they fit this run's model.

Every trained model keeps its weights beside its SavedModel, in the Model
artifact (`warm_start/`, outside Format-Serving, so never pushed): a Keras
model cannot be rebuilt from the exported SavedModel, whose signatures wrap
Transform. Weights are saved per layer, in layer order, and loaded layer by
layer where the shapes agree. Layer names would not do: Keras numbers
automatic names per process, so the same network gets other names in
another run.

Whether to warm-start, and why not, is decided from the saved description:
the same network (model, or the module file's digest) and the same input
shape load every layer; other classes get a new head (the last layer with
weights is left as built) over the old weights.

The base model is a Model artifact: on local runs the last blessed one trained on
earlier data (ML Metadata's resolver), on KFP and Vertex PushedWarmStart's copy of
the served version's folder, whose ORIGIN_FILE names that version, or says why
there is nothing to start from.
"""
import dataclasses
import io
import json
import os
from typing import List, Optional

import numpy as np

from components.image_pusher.provenance import INFO_FILE, ORIGIN_FILE, WARM_START_DIR, WEIGHTS_FILE
from core.storage import files


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether to start from `source`'s weights; `new_head`: its classes differ."""

    source: Optional[str]  # the base model's warm_start folder, or None: from scratch
    new_head: bool
    reason: str
    version: Optional[int] = None  # the pushed version the base model is (ORIGIN_FILE)

    @property
    def warm(self) -> bool:
        return self.source is not None


def folder_of(serving_model_dir: str) -> str:
    """The warm-start folder of the Model artifact whose SavedModel is `serving_model_dir`."""
    return os.path.join(os.path.dirname(str(serving_model_dir).rstrip("/")), WARM_START_DIR)


def describe(model_name: str, module_sha256: Optional[str], image_shape, labels: List[str],
             architecture: Optional[dict] = None):
    """What decides whether saved weights fit a model. `architecture`: a search's shape
    (modules/networks/space.py), None when untuned; weights load by layer position, so a
    model one block deeper must not take them."""
    return {"model": model_name, "module_sha256": module_sha256,
            "image_shape": [int(d) for d in image_shape], "labels": list(labels),
            "architecture": architecture}


def save(model, description: dict, serving_model_dir: str) -> None:
    """Writes the weights, layer by layer, and the description beside the SavedModel."""
    folder = folder_of(serving_model_dir)
    arrays = {f"{i}_{j}": w for i, layer in enumerate(model.layers)
              for j, w in enumerate(layer.get_weights())}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    files.write_bytes(os.path.join(folder, WEIGHTS_FILE), buffer.getvalue())
    files.write_text(os.path.join(folder, INFO_FILE),
                     json.dumps({**description, "layers": len(model.layers)}))


def _read_json(path: str) -> Optional[dict]:
    """The JSON object at `path`, or None: missing or unreadable is "nothing saved"."""
    try:
        found = json.loads(files.read_text(path)) if files.exists(path) else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def decide(base_model: Optional[str], description: dict) -> Decision:
    """Whether the base model at `base_model` (its SavedModel path) can start this one."""
    if not base_model:
        return Decision(None, False, "no earlier blessed model")
    folder = folder_of(base_model)
    origin = _read_json(os.path.join(folder, ORIGIN_FILE)) or {}
    version = origin.get("version")
    base = f"version {version}" if version is not None else "the blessed model"
    saved = _read_json(os.path.join(folder, INFO_FILE))
    if saved is None:
        # A PushedWarmStart copy that holds no weights says why (nothing pushed yet, ...).
        named = base if version is not None else f"{base} {os.path.dirname(base_model)}"
        return Decision(None, False, origin.get("reason") or
                        f"{named} kept no weights to start from", version)
    for key, what in (("model", "network"), ("module_sha256", "module file"),
                      ("image_shape", "input shape"), ("architecture", "searched shape")):
        if saved.get(key) != description[key]:
            return Decision(None, False, f"{base}'s {what} was {saved.get(key)}, this run's is "
                                         f"{description[key]}", version)
    if saved["labels"] != description["labels"]:
        added = [c for c in description["labels"] if c not in saved["labels"]]
        change = f"new classes {added}" if added else "classes changed"
        return Decision(folder, True, f"{change}: a new head over {base}'s weights", version)
    return Decision(folder, False, "same network, input shape and classes", version)


def _head_index(model) -> int:
    """The last layer with weights: the classifier."""
    return max(i for i, layer in enumerate(model.layers) if layer.weights)


def load(model, decision: Decision) -> int:
    """Sets every layer whose saved weights have the same shapes; returns how many.

    With `decision.new_head` the classifier keeps its fresh weights.
    """
    saved = np.load(io.BytesIO(files.read_bytes(os.path.join(decision.source, WEIGHTS_FILE))))
    skip = _head_index(model) if decision.new_head else -1
    loaded = 0
    for i, layer in enumerate(model.layers):
        current = layer.get_weights()
        if i == skip or not current:
            continue
        arrays = [saved.get(f"{i}_{j}") for j in range(len(current))]
        if all(a is not None and a.shape == w.shape for a, w in zip(arrays, current)):
            layer.set_weights(arrays)
            loaded += 1
    return loaded
