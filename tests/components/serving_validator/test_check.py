"""The serving check: a fresh process loads the model, replays warmup, and answers REST."""
import base64
import json

import numpy as np
import pytest
import tensorflow as tf

from components.serving_validator import warmup
from components.serving_validator import check as check_module
from components.serving_validator.check import (ServingCheck, start_spare, stop_spare,
                                                take_check)
from components.serving_validator.serving_worker import rest_predict

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


@pytest.fixture(scope="module")
def warmup_file(exported_model, tmp_path_factory):
    images = [image for _, image in warmup.eval_records(exported_model.examples_uri, 100)]
    path = str(tmp_path_factory.mktemp("warmup") / "requests")
    warmup.write_logs(path, warmup.warmup_logs(images, "digits"))
    return path


def _check(model_dir, warmup_path, atol=1e-4, timeout=300):
    check = ServingCheck()
    check.send(model_dir, warmup_path, rest_requests=32, atol=atol)
    return check.result(timeout=timeout)


def test_a_served_model_passes_with_latencies(exported_model, warmup_file):
    result = _check(exported_model.model_dir, warmup_file)
    assert result["ok"], result
    assert result["rest_requests"] == len(warmup.eval_records(exported_model.examples_uri, 100))
    assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["max_abs_diff"] < 1e-5 and result["load_s"] > 0


def test_rest_requests_in_row_format_answer_as_the_signature(exported_model):
    loaded = tf.saved_model.load(exported_model.model_dir)
    images = [p.read_bytes() for p in exported_model.images[:3]]
    want = loaded.signatures["serving_image"](image_bytes=tf.constant(images))
    encoded = [base64.b64encode(image).decode() for image in images]
    for instances in ([{"b64": e} for e in encoded],  # a single input: the value itself
                      [{"image_bytes": {"b64": e}} for e in encoded]):  # or keyed by name
        body = json.dumps({"signature_name": "serving_image", "instances": instances})
        got = json.loads(rest_predict(loaded, body))["predictions"]
        np.testing.assert_allclose([p["probabilities"] for p in got],
                                   want["probabilities"].numpy(), atol=1e-6)
        assert [p["class_name"] for p in got] == [n.decode() for n in
                                                   want["class_name"].numpy()]
        assert [p["class_id"] for p in got] == list(want["class_id"].numpy())


def test_a_folder_that_is_no_saved_model_fails_to_load(tmp_path, warmup_file):
    (tmp_path / "saved_model.pb").write_bytes(b"not a graph")
    result = _check(str(tmp_path), warmup_file)
    assert not result["ok"] and result["reason"].startswith("the SavedModel did not load")


class _Disagreeing(tf.Module):
    """serving_image and serving_default that answer differently for the same image."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="image_bytes")])
    def image(self, image_bytes):
        rows = tf.shape(image_bytes)[0]
        return {"probabilities": tf.tile([[1.0, 0.0]], [rows, 1])}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def examples(self, examples):
        rows = tf.shape(examples)[0]
        return {"probabilities": tf.tile([[0.5, 0.5]], [rows, 1])}


def test_answers_that_differ_from_the_evaluators_signature_fail(tmp_path, warmup_file):
    module = _Disagreeing()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={
        "serving_image": module.image, "serving_default": module.examples})
    result = _check(str(tmp_path / "m"), warmup_file)
    assert not result["ok"] and "differ from the Evaluator's signature by 5.00e-01" in \
        result["reason"], result


def test_a_model_without_the_rest_signature_fails(tmp_path, warmup_file):
    module = _Disagreeing()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={
        "serving_default": module.examples})
    result = _check(str(tmp_path / "m"), warmup_file)
    assert result == {"ok": False, "reason": "the SavedModel has no 'serving_image' signature",
                      "kind": "model"}


def test_a_process_that_does_not_answer_in_time_fails(exported_model, warmup_file):
    result = _check(exported_model.model_dir, warmup_file, timeout=0.01)
    assert result == {"ok": False, "kind": "infrastructure",
                      "reason": "the serving check timed out: the serving process did not "
                                "answer in 0.01 s"}


def test_a_spare_worker_started_ahead_is_the_one_the_next_check_takes(exported_model,
                                                                      warmup_file):
    start_spare()
    spare = check_module._spare
    start_spare()  # one waiting is enough
    assert check_module._spare is spare and spare.alive()
    taken = take_check()
    assert taken is spare and check_module._spare is None
    taken.send(exported_model.model_dir, warmup_file, rest_requests=4, atol=1e-4)
    assert taken.result(timeout=300)["ok"]
    assert take_check() is not spare  # taken once: the next check starts its own
    start_spare()
    left = check_module._spare
    stop_spare()  # nobody took it: stopped, not left running
    assert check_module._spare is None and not left.alive()
