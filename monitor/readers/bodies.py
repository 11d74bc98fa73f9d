"""Prediction request and response bodies, as the JSON logs hold them: one Record per image.

The forms (checked against each server's documentation):
- TF Serving's REST predict API (also KServe's v1 protocol and Vertex AI's
  predict): row form `{"instances": [...]}` -> `{"predictions": [...]}`, column
  form `{"inputs": ...}` -> `{"outputs": ...}`; binary values as `{"b64": "..."}`.
  An instance of our `serving_image` signature is `{"image_bytes": {"b64": ...}}`
  (or `{"b64": ...}` alone); a prediction of a signature with several outputs is
  an object, `{"probabilities": [...], "class_id": 3, ...}`, of one output a list.
- The Open Inference Protocol (KServe v2): `{"inputs": [{"name", "shape",
  "datatype", "data"}]}` -> `{"outputs": [{"name": "probabilities", "shape": [n, k],
  "datatype": "FP32", "data": [...flat...]}]}`; BYTES data as base64 strings.
"""
import base64
import binascii
import json
from typing import List, Optional, Tuple

import numpy as np

from core.contract import IMAGE_BYTES_INPUT, PROBABILITIES
from monitor.records import BadRecord, Item, Record

# What one prediction says: every class's probability, or only the top class id.
Answer = Tuple[Optional[np.ndarray], Optional[int]]
CLASS_ID_OUTPUTS = ("class_id", "classes")


def as_body(value: object) -> dict:
    """A body that a log may hold as an object or as JSON text."""
    if isinstance(value, (str, bytes)):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"a body is a JSON object, not {type(value).__name__}")
    return value


def request_images(body: dict) -> List[bytes]:
    """The encoded image of each instance of a request; ValueError says why not."""
    if "instances" in body:
        return [_image(instance) for instance in body["instances"]]
    inputs = body.get("inputs")
    if _is_v2(inputs):
        return [_b64(value) for value in _named(inputs, IMAGE_BYTES_INPUT)["data"]]
    if isinstance(inputs, dict):
        inputs = inputs.get(IMAGE_BYTES_INPUT, next(iter(inputs.values()), None))
    if isinstance(inputs, list):
        return [_b64(value) for value in inputs]
    raise ValueError("the request has no 'instances' or 'inputs'")


def response_answers(body: dict) -> List[Answer]:
    """What the model answered for each instance; ValueError says why not."""
    if "predictions" in body:
        return [_answer(prediction) for prediction in body["predictions"]]
    outputs = body.get("outputs")
    if _is_v2(outputs):
        return _v2_answers(outputs)
    if isinstance(outputs, dict):
        key = PROBABILITIES if PROBABILITIES in outputs else next(
            (k for k in CLASS_ID_OUTPUTS if k in outputs), None)
        outputs = outputs.get(key)
    if isinstance(outputs, list):
        return [_answer(value) for value in outputs]
    raise ValueError("the response has no 'predictions' or 'outputs'")


def records(where: str, request: Optional[dict], response: Optional[dict]) -> List[Item]:
    """One Record per instance of a logged request and/or its response, ids `where` (one
    instance) or `where[i]`; a body that cannot be read is one BadRecord."""
    try:
        images = None if request is None else request_images(request)
        answers = None if response is None else response_answers(response)
    except (ValueError, TypeError, KeyError) as e:
        return [BadRecord(where, str(e))]
    if images is not None and answers is not None and len(images) != len(answers):
        return [BadRecord(where, f"{len(images)} instance(s) in the request, "
                                 f"{len(answers)} prediction(s) in the response")]
    count = len(images if images is not None else answers or [])
    if count == 0:
        return [BadRecord(where, "no instances")]
    return [Record(f"{where}[{i}]" if count > 1 else where,
                   image=None if images is None else images[i],
                   probabilities=None if answers is None else answers[i][0],
                   predicted=None if answers is None else answers[i][1])
            for i in range(count)]


def _is_v2(tensors: object) -> bool:
    return isinstance(tensors, list) and bool(tensors) and all(
        isinstance(t, dict) and "data" in t for t in tensors)


def _named(tensors: List[dict], name: str) -> dict:
    return next((t for t in tensors if t.get("name") == name), tensors[0])


def _image(instance: object) -> bytes:
    if isinstance(instance, dict) and "b64" not in instance:
        instance = instance.get(IMAGE_BYTES_INPUT, next(
            (v for v in instance.values() if isinstance(v, dict) and "b64" in v), None))
    return _b64(instance)


def _b64(value: object) -> bytes:
    if isinstance(value, dict) and "b64" in value:
        value = value["b64"]
    if not isinstance(value, str):
        raise ValueError(f"an instance holds no base64 image ({{\"b64\": ...}}), but "
                         f"{type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as e:
        raise ValueError(f"an instance's image is not base64: {e}") from None


def _answer(value: object) -> Answer:
    if isinstance(value, dict):
        if PROBABILITIES in value:
            return _probabilities(value[PROBABILITIES]), None
        value = next((value[k] for k in CLASS_ID_OUTPUTS if k in value), value)
    if isinstance(value, list):
        return _probabilities(value), None
    if isinstance(value, int) and not isinstance(value, bool):
        return None, value
    raise ValueError(f"a prediction holds no probabilities or class id: {str(value)[:80]}")


def _probabilities(values: object) -> np.ndarray:
    found = np.asarray(values, dtype=np.float32)
    if found.ndim != 1 or found.size == 0:
        raise ValueError(f"probabilities are a list of numbers, not shape {found.shape}")
    return found


def _v2_answers(outputs: List[dict]) -> List[Answer]:
    named = {t.get("name"): t for t in outputs}
    tensor = named.get(PROBABILITIES) or next(
        (named[k] for k in CLASS_ID_OUTPUTS if k in named), outputs[0])
    values = np.asarray(tensor["data"]).reshape(tensor.get("shape") or [-1])
    if values.ndim == 2:
        return [(_probabilities(row), None) for row in values]
    return [(None, int(v)) for v in values]
