"""`prediction_log`: TensorFlow Serving PredictionLog TFRecords, gzipped or not.

What writes them (tensorflow_serving/apis/prediction_log.proto):
- TFX's BulkInferrer (tfx/components/bulk_inferrer/executor.py, through
  tfx_bsl's RunInference) writes `prediction_logs-*.gz`; for a predict signature
  one `predict_log` per example: request inputs {<the signature's input, e.g.
  "examples">: DT_STRING [1], the serialized tf.Example}, request and response
  model_spec.signature_name, response outputs {alias: the example's row, e.g.
  "probabilities" [1, classes]}; for classify signatures a `classify_log`
  (request.input.example_list, response.result.classifications[].classes[]
  {label, score}), for several a `multi_inference_log`;
- TensorFlow Serving's request logging, in a build that registers a log collector
  (the open-source server registers none), and `imagepipe predict --log`: a
  `predict_log` per request, inputs {"image_bytes": DT_STRING [n]} for
  our serving_image signature, outputs {"probabilities": [n, classes]}.
One Record per image of a request; a log without a response gives Records the
monitor scores. A record that is not a PredictionLog, or a file cut short, is a
BadRecord "FILE#N" (N counts records from 0), and the next file is read.
"""
from typing import Iterable, Iterator, List, Optional, Sequence

import numpy as np

from core.contract import (FILENAME_KEY, IMAGE_BYTES_INPUT, IMAGE_KEY,
                           PROBABILITIES)
from monitor.readers.registry import JSON_SUFFIXES, looks_like_tfrecord, reader
from monitor.records import BadRecord, Item, Record


def _is_log_file(sample) -> bool:
    if sample.name.lower().endswith(JSON_SUFFIXES) or sample.name.startswith("_"):
        return False  # Beam's _SUCCESS-style markers, JSON lines
    return ".tfrecord" in sample.name.lower() or looks_like_tfrecord(sample.head)


@reader("prediction_log", sniff=_is_log_file)
def read_prediction_logs(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """Records of every PredictionLog of every file, in order."""
    import tensorflow as tf

    from components.image_example_gen.readers.tfrecords import iter_records
    for path in paths:
        count = 0
        try:
            for record in iter_records(path):
                yield from _parsed(record, f"{path}#{count}")
                count += 1
        except tf.errors.OpError as e:  # DataLossError: truncated or corrupt
            yield BadRecord(f"{path}#{count}", f"unreadable TFRecord: {e.message}")


def _parsed(record: bytes, where: str) -> List[Item]:
    from google.protobuf.message import DecodeError
    from tensorflow_serving.apis import prediction_log_pb2
    try:
        log = prediction_log_pb2.PredictionLog.FromString(record)
    except DecodeError:
        return [BadRecord(where, "not a PredictionLog")]
    return log_records(log, where)


def log_records(log, where: str) -> List[Item]:
    """One Record per image of one PredictionLog, ids `where` or the example's file name."""
    kind = log.WhichOneof("log_type")
    try:
        if kind == "predict_log":
            inputs = _predict_inputs(log.predict_log.request.inputs)
            answers = _predict_answers(log.predict_log.response.outputs, len(inputs))
        elif kind in ("classify_log", "multi_inference_log"):
            request, classifications = _classification_parts(log, kind)
            inputs = [_example_input(e.SerializeToString()) for e in request.examples]
            answers = [(_scores(c), None) for c in classifications] or [(None, None)] * len(
                inputs)
        else:
            return [BadRecord(where, f"a {kind or 'empty'} log; the monitor reads predict, "
                                     "classify and multi-inference logs")]
    except ValueError as e:
        return [BadRecord(where, str(e))]
    if len(answers) != len(inputs):
        return [BadRecord(where, f"{len(inputs)} input(s), {len(answers)} answer(s)")]
    many = len(inputs) > 1
    return [Record(name or (f"{where}[{i}]" if many else where), image=image,
                   probabilities=probabilities, predicted=predicted)
            for i, ((name, image), (probabilities, predicted)) in enumerate(zip(inputs,
                                                                                answers))]


def _predict_inputs(inputs) -> List[tuple]:
    """(file name or None, image bytes) of each image of a PredictRequest."""
    if IMAGE_BYTES_INPUT in inputs:
        return [(None, value) for value in inputs[IMAGE_BYTES_INPUT].string_val]
    strings = [t for t in inputs.values() if t.string_val]
    if not strings:
        raise ValueError(f"the request has no {IMAGE_BYTES_INPUT!r} or serialized "
                         f"tf.Example input (inputs: {', '.join(sorted(inputs)) or 'none'})")
    return [_example_input(value) for value in strings[0].string_val]


def _example_input(serialized: bytes) -> tuple:
    """(image/filename or None, image/encoded) of a serialized tf.Example."""
    import tensorflow as tf
    from google.protobuf.message import DecodeError
    try:
        feature = tf.train.Example.FromString(serialized).features.feature
    except DecodeError:
        raise ValueError("an input is neither image bytes nor a tf.Example") from None
    if IMAGE_KEY not in feature or not feature[IMAGE_KEY].bytes_list.value:
        raise ValueError(f"a tf.Example without {IMAGE_KEY!r}")
    names = feature[FILENAME_KEY].bytes_list.value if FILENAME_KEY in feature else []
    return (names[0].decode("utf-8", "replace") if names else None,
            feature[IMAGE_KEY].bytes_list.value[0])


def _predict_answers(outputs, count: int) -> List[tuple]:
    """(probabilities, None) or (None, class id) per image; (None, None) with no response."""
    import tensorflow as tf
    if PROBABILITIES in outputs:
        values = tf.make_ndarray(outputs[PROBABILITIES]).astype(np.float32)
        return [(row, None) for row in values.reshape(count, -1)]
    if "class_id" in outputs:
        return [(None, int(v)) for v in tf.make_ndarray(outputs["class_id"]).reshape(-1)]
    return [(None, None)] * count


def _classification_parts(log, kind: str):
    """(the request's example list, its classifications) of a classify or
    multi-inference log (its first classification result)."""
    part = getattr(log, kind)
    request = part.request.input.example_list
    if kind == "classify_log":
        return request, part.response.result.classifications
    results = [r for r in part.response.results if r.HasField("classification_result")]
    return request, results[0].classification_result.classifications if results else []


def _scores(classification) -> Optional[np.ndarray]:
    """Every class's score; by label where the labels are class ids ("0", "1", ...)."""
    classes = list(classification.classes)
    if classes and all(c.label.isdigit() for c in classes):
        scores = np.zeros(max(int(c.label) for c in classes) + 1, np.float32)
        for c in classes:
            scores[int(c.label)] = c.score
        return scores
    return np.array([c.score for c in classes], np.float32) if classes else None
