"""TF Serving warmup records: real eval images, as the PredictionLogs TF Serving replays.

When TF Serving loads a version, it replays
`<version>/assets.extra/tf_serving_warmup_requests` (a TFRecord of
`tensorflow_serving.apis.PredictionLog`) before the version takes traffic, so
the first real requests do not pay for graph initialization. TF Serving reads
at most 1,000 records (servables/tensorflow/saved_model_warmup_util.cc,
kMaxNumRecords); TFX's InfraValidator writes the same file.
"""
import os
from typing import Iterator, List, Optional, Tuple

import tensorflow as tf
from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2

from core.contract import (ASSETS_EXTRA, EVAL, IMAGE_BYTES_INPUT, IMAGE_KEY,
                           SERVING_IMAGE, split_dir)
from core.storage import files

WARMUP_FILE = os.path.join(ASSETS_EXTRA, "tf_serving_warmup_requests")
TF_SERVING_MAX_RECORDS = 1000


def eval_records(examples_uri: str, limit: int,
                 max_bytes: Optional[int] = None) -> List[Tuple[bytes, bytes]]:
    """Up to `limit` (serialized tf.Example, encoded image) pairs from the eval split.

    `max_bytes` bounds the images' total size: the records are copied into
    every pushed version, and a camera photo can be several MB.
    """
    shards = sorted(files.glob(os.path.join(split_dir(examples_uri, EVAL), "*.gz")))
    taken, total = [], 0
    for record in _records(shards):
        image = tf.train.Example.FromString(record).features.feature[IMAGE_KEY].bytes_list.value
        if not image:
            continue
        if len(taken) >= limit or (max_bytes and taken and total + len(image[0]) > max_bytes):
            break
        taken.append((record, image[0]))
        total += len(image[0])
    return taken


def _records(shards: List[str]) -> Iterator[bytes]:
    if shards:
        for record in tf.data.TFRecordDataset(shards, compression_type="GZIP"):
            yield record.numpy()


def prediction_log(images: List[bytes], model_name: str) -> prediction_log_pb2.PredictionLog:
    """One PredictRequest on `serving_image` with `images` as its batch."""
    request = predict_pb2.PredictRequest(
        model_spec=model_pb2.ModelSpec(name=model_name, signature_name=SERVING_IMAGE))
    request.inputs[IMAGE_BYTES_INPUT].CopyFrom(tf.make_tensor_proto(images, dtype=tf.string,
                                                                    shape=[len(images)]))
    return prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=request))


def warmup_logs(images: List[bytes], model_name: str,
                batch_sizes=(1,)) -> List[prediction_log_pb2.PredictionLog]:
    """One single-image request per image, then one per larger batch size.

    Single images are what online traffic sends; the larger batches are what
    the server's batching (batching.config) forms under load.
    """
    logs = [prediction_log([image], model_name) for image in images]
    for size in batch_sizes:
        if 1 < size <= len(images):
            logs.append(prediction_log(images[:size], model_name))
    return logs[:TF_SERVING_MAX_RECORDS]


def write_logs(path: str, logs: List[prediction_log_pb2.PredictionLog]) -> None:
    files.makedirs(os.path.dirname(path))
    with tf.io.TFRecordWriter(path) as writer:
        for log in logs:
            writer.write(log.SerializeToString())


def read_logs(path: str) -> List[prediction_log_pb2.PredictionLog]:
    """The records of a warmup file, parsed (raises on a record that is not a PredictionLog)."""
    return [prediction_log_pb2.PredictionLog.FromString(record.numpy())
            for record in tf.data.TFRecordDataset([path])]
