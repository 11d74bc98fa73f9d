"""Warmup records: real eval images as PredictionLogs that TF Serving can replay."""
import pytest
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from components.serving_validator import warmup
from components.serving_validator.serving_worker import CheckFailed, replay

pytestmark = pytest.mark.integration  # a real exported SavedModel, loaded


def test_the_file_parses_as_prediction_logs_of_eval_images(exported_model, tmp_path):
    records = warmup.eval_records(exported_model.examples_uri, limit=100)
    images = [image for _, image in records]
    sources = {p.read_bytes() for p in exported_model.images}
    assert images and set(images) <= sources  # the ingested bytes, unchanged
    path = str(tmp_path / "assets.extra" / "tf_serving_warmup_requests")
    warmup.write_logs(path, warmup.warmup_logs(images, "digits", batch_sizes=(2, 64)))
    raw = [r.numpy() for r in tf.data.TFRecordDataset([path])]
    logs = [prediction_log_pb2.PredictionLog.FromString(r) for r in raw]
    assert len(logs) == len(images) + 1  # one per image, and one batch of 2 (64 is too many)
    for log, image in zip(logs, images):
        request = log.predict_log.request
        assert (request.model_spec.name, request.model_spec.signature_name) == (
            "digits", "serving_image")
        assert list(tf.make_ndarray(request.inputs["image_bytes"])) == [image]
    assert tf.make_ndarray(logs[-1].predict_log.request.inputs["image_bytes"]).shape == (2,)


def test_loading_with_the_file_replays_every_request(exported_model, tmp_path):
    images = [image for _, image in warmup.eval_records(exported_model.examples_uri, 100)]
    path = str(tmp_path / "warmup")
    warmup.write_logs(path, warmup.warmup_logs(images, "digits", batch_sizes=(2,)))
    loaded = tf.saved_model.load(exported_model.model_dir)
    assert replay(loaded, path) == images


def test_a_record_for_a_signature_the_model_lacks_fails_the_replay(exported_model, tmp_path):
    log = warmup.prediction_log([b"x"], "digits")
    log.predict_log.request.model_spec.signature_name = "serving_video"
    path = str(tmp_path / "warmup")
    warmup.write_logs(path, [log])
    with pytest.raises(CheckFailed, match="warmup record 1: no signature 'serving_video'"):
        replay(tf.saved_model.load(exported_model.model_dir), path)


def test_limits_count_and_bytes_and_tf_serving_reads_at_most_1000(exported_model):
    assert len(warmup.eval_records(exported_model.examples_uri, limit=1)) == 1
    first = warmup.eval_records(exported_model.examples_uri, limit=100)
    one_image = len(first[0][1])
    # The byte budget keeps at least one image, and stops before exceeding it.
    assert len(warmup.eval_records(exported_model.examples_uri, 100, max_bytes=1)) == 1
    assert len(warmup.eval_records(exported_model.examples_uri, 100,
                                   max_bytes=one_image * 2)) == 2
    assert len(warmup.warmup_logs([b"x"] * 1500, "m")) == warmup.TF_SERVING_MAX_RECORDS
