"""The serving check's server side: a fresh process that loads the candidate as TF Serving would.

    python -m components.serving_validator.serving_worker < job.json > result.json

It imports TensorFlow (and TF Serving's protos) and nothing of TFX or
imagepipe's training code (only the light core/contract.py), so a model
that needs the training process to load fails here as it would in a server.
TensorFlow is imported before the job is read: the InfraValidator starts this
process first and sends the job when the warmup file is written, so the import
overlaps reading the eval images.

Job: {"model_dir", "warmup_path", "image_key", "rest_requests", "atol", and with a real
server "model_server" (its binary), "model_name" and "timeout_s"}.
Result: {"ok", "reason", ...figures}; see check().
"""
import base64
import json
import sys
import time

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from core.contract import PROBABILITIES, SERVING_DEFAULT, SERVING_IMAGE

REST_SIGNATURE = SERVING_IMAGE
IN_PROCESS = "in-process stand-in"  # the result's "server" without a model server binary
EVALUATOR_SIGNATURE = SERVING_DEFAULT  # what TFMA's ModelSpec evaluates


# What a failed check blames (components/image_pusher/judged_inputs.py): the model, which
# no retry changes, or the infrastructure, which the next run tries again.
MODEL, INFRASTRUCTURE = "model", "infrastructure"


class CheckFailed(Exception):
    """The candidate did not load or did not answer as a server needs."""

    kind = MODEL


class ServerFailed(CheckFailed):
    """The model server could not start or did not answer in time."""

    kind = INFRASTRUCTURE


def _value(item):
    """A JSON value as TF Serving's REST API reads it: {"b64": ...} is binary."""
    if isinstance(item, dict) and set(item) == {"b64"}:
        return base64.b64decode(item["b64"])
    return item


def _json(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value.tolist() if isinstance(value, np.ndarray) else value.item()


def rest_predict(loaded, body: str) -> str:
    """A `:predict` request in TF Serving's row format, answered through the signature.

    Row format (tensorflow.org/tfx/serving/api_rest): "instances" is a list,
    one element per example; with a single input each element is the value
    itself, otherwise an object keyed by input name. Responses come back as
    {"predictions": [{output name: value}, ...]}.
    """
    request = json.loads(body)
    signature = loaded.signatures[request.get("signature_name", SERVING_DEFAULT)]
    specs = signature.structured_input_signature[1]
    instances = request["instances"]
    if len(specs) == 1:
        (name, spec), = specs.items()
        columns = {name: [_value(i[name] if isinstance(i, dict) and name in i else i)
                          for i in instances]}
    else:
        columns = {name: [_value(i[name]) for i in instances] for name in specs}
    outputs = signature(**{name: tf.constant(values, dtype=specs[name].dtype)
                           for name, values in columns.items()})
    arrays = {name: tensor.numpy() for name, tensor in outputs.items()}
    return json.dumps({"predictions": [{name: _json(array[i]) for name, array in arrays.items()}
                                       for i in range(len(instances))]})


def _checked(outputs, rows: int, what: str) -> np.ndarray:
    """The probabilities of one answer, or CheckFailed saying what is wrong with them."""
    if PROBABILITIES not in outputs:
        raise CheckFailed(f"{what}: no 'probabilities' output (got {sorted(outputs)})")
    probabilities = np.asarray(outputs[PROBABILITIES], dtype=np.float64)
    if probabilities.ndim != 2 or probabilities.shape[0] != rows:
        raise CheckFailed(f"{what}: probabilities of shape {probabilities.shape} for {rows} "
                          "images")
    if not np.all(np.isfinite(probabilities)) or not np.allclose(probabilities.sum(-1), 1.0,
                                                                 atol=1e-3):
        raise CheckFailed(f"{what}: probabilities are not finite or do not sum to 1")
    return probabilities


def replay(loaded, warmup_path: str) -> list:
    """Replays every warmup record as TF Serving does; returns the single images sent."""
    images = []
    for number, record in enumerate(tf.data.TFRecordDataset([warmup_path]), 1):
        request = prediction_log_pb2.PredictionLog.FromString(record.numpy()).predict_log.request
        name = request.model_spec.signature_name or SERVING_DEFAULT
        if name not in loaded.signatures:
            raise CheckFailed(f"warmup record {number}: no signature {name!r}")
        inputs = {key: tf.constant(tf.make_ndarray(proto)) for key, proto in request.inputs.items()}
        rows = int(next(iter(inputs.values())).shape[0])
        outputs = loaded.signatures[name](**inputs)
        _checked({k: v.numpy() for k, v in outputs.items()}, rows, f"warmup record {number}")
        if rows == 1:
            images.append(next(iter(inputs.values())).numpy()[0])
    return images


def _example(image: bytes, image_key: str) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        image_key: tf.train.Feature(bytes_list=tf.train.BytesList(value=[image]))})
    ).SerializeToString()


def check(job: dict) -> dict:
    """Load, replay the warmup file, answer REST requests, and agree with the Evaluator's path."""
    started = time.perf_counter()
    try:
        loaded = tf.saved_model.load(job["model_dir"])
    except Exception as e:  # noqa: BLE001  (any load failure is the answer)
        raise CheckFailed(f"the SavedModel did not load: {type(e).__name__}: "
                          f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    for name in (REST_SIGNATURE, EVALUATOR_SIGNATURE):
        if name not in loaded.signatures:
            raise CheckFailed(f"the SavedModel has no {name!r} signature")
    load_s = time.perf_counter() - started
    images = replay(loaded, job["warmup_path"])
    replay_s = time.perf_counter() - started - load_s
    sent = images[:job["rest_requests"]]
    latencies, rest = _rest_answers(job, loaded, sent)
    diff = 0.0
    if sent:
        evaluated = loaded.signatures[EVALUATOR_SIGNATURE](examples=tf.constant(
            [_example(image, job["image_key"]) for image in sent]))
        expected = _checked({PROBABILITIES: evaluated[PROBABILITIES].numpy()}, len(sent),
                            EVALUATOR_SIGNATURE)
        diff = float(np.max(np.abs(expected - np.stack(rest))))
        if diff > job["atol"]:
            raise CheckFailed(f"REST answers differ from the Evaluator's signature by {diff:.2e} "
                              f"(> {job['atol']})")
    return {"load_s": round(load_s, 3), "replay_s": round(replay_s, 3),
            "server": job.get("model_server") or IN_PROCESS,
            "rest_requests": len(sent), "max_abs_diff": diff,
            "p50_ms": _percentile_ms(latencies, 50), "p99_ms": _percentile_ms(latencies, 99)}


def _rest_answers(job: dict, loaded, images: list):
    """(latencies, probabilities) of one REST request per image: answered in this process,
    or by the real server `job["model_server"]` names (model_server.py)."""
    server, answer = None, lambda body: rest_predict(loaded, body)
    if job.get("model_server"):
        from components.serving_validator.model_server import ModelServer
        try:
            server = ModelServer(job["model_server"], job["model_dir"], job["warmup_path"],
                                 job["model_name"], job.get("scratch"))
        except RuntimeError as e:  # the binary could not start
            raise ServerFailed(f"the model server: {e}") from None
        answer = server.predict
    try:
        if server is not None:
            server.wait_available(job["timeout_s"])
        latencies, rest = [], []
        for image in images:
            body = json.dumps({"signature_name": REST_SIGNATURE,
                               "instances": [{"b64": base64.b64encode(image).decode()}]})
            begin = time.perf_counter()
            predictions = json.loads(answer(body))["predictions"]
            latencies.append(time.perf_counter() - begin)
            rest.append(_checked({PROBABILITIES: [predictions[0][PROBABILITIES]]}, 1,
                                 "REST request")[0])
        return latencies, rest
    except RuntimeError as e:
        from components.serving_validator.model_server import ServerUnavailable
        failed = ServerFailed if isinstance(e, ServerUnavailable) else CheckFailed
        raise failed(f"the model server: {e}") from None
    finally:
        if server is not None:
            server.stop()


def _percentile_ms(seconds: list, q: float):
    return round(float(np.percentile(seconds, q)) * 1000, 3) if seconds else None


def main() -> int:
    job = json.loads(sys.stdin.read())
    try:
        result = {"ok": True, "reason": "loaded, replayed the warmup requests and answered REST",
                  **check(job)}
    except CheckFailed as e:
        result = {"ok": False, "reason": str(e), "kind": e.kind}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
