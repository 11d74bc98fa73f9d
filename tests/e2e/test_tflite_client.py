"""The TFLite file as a phone runs it: the TFLite Task Library classifies the eval photos
from their files within the parity tolerance of the SavedModel, and the gate's own client
path agrees with it.

The Task Library lives in a venv of its own (tflite-support pins protobuf<4), built
under pytest's cache folder, .pytest_cache/d/tflite-task-library, and reused: about
10 s here with a package registry (tflite-support 0.4.4 and numpy<2 wheels). Without
a registry, or where its native library cannot load, the test skips and says why.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from core import limits
from core.contract import EVAL, IMAGE_BYTES_INPUT, SERVING_IMAGE, split_dir
from core.images import pixel_decoder
from components.tflite_converter.client_inputs import client_decoder, split_batches
from components.tflite_converter.conversion import Runner
from components.tflite_converter.tflite_metadata import embed_metadata
from tests.support import generated_photos
from tests.support.cli import run_pipeline
from tests.support.paths import SUPPORT

pytestmark = pytest.mark.slow

CLIENT_PACKAGES = ("tflite-support==0.4.4", "numpy<2")
CLIENT = str(SUPPORT / "task_library_client.py")
# generated_photos.SIZES: the median long side is 640, so the file takes 512 px (4x the
# 128-px model, the cap) and shrinks them inside.


def _pip_failed(step: str, result: subprocess.CompletedProcess) -> None:
    tail = (result.stderr or result.stdout or "").strip().splitlines()[-3:]
    pytest.skip(f"the Task Library venv could not be built ({step}): {' / '.join(tail)}")


@pytest.fixture(scope="session")
def task_library(request, tmp_path_factory) -> str:
    """The python of a venv holding the Task Library, built once and kept in pytest's cache
    (in a temporary folder under -p no:cacheprovider)."""
    cache = getattr(request.config, "cache", None)
    folder = (cache.mkdir("tflite-task-library") if cache is not None
              else tmp_path_factory.mktemp("tflite-task-library"))
    python = os.path.join(folder, "venv", "bin", "python")
    check = [python, "-c", "from tflite_support.task import vision"]
    if os.path.exists(python) and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder / "venv")],
                          capture_output=True, text=True)
    if made.returncode:
        _pip_failed("python -m venv", made)
    installed = subprocess.run([python, "-m", "pip", "install", "-q", "--timeout", "60",
                                *CLIENT_PACKAGES], capture_output=True, text=True,
                               timeout=600)
    if installed.returncode:
        _pip_failed("pip install " + " ".join(CLIENT_PACKAGES), installed)
    loaded = subprocess.run(check, capture_output=True, text=True)
    if loaded.returncode:
        _pip_failed("import tflite_support.task (libusb-1.0 missing?)", loaded)
    return python


def make_photos(root, count=48):
    """Photo-like detail at every size, and a sensor's grain."""
    return generated_photos.make_photos(root, count, seed=1, detail=(12, 16), boost=85,
                                        grain=12, quality=90)


def _client(task_library: str, *args: str):
    answered = subprocess.run([task_library, CLIENT, *args], capture_output=True, text=True,
                              timeout=600)
    assert answered.returncode == 0, answered.stderr[-3000:]
    return json.loads(answered.stdout)


def _identity_model(side: int) -> bytes:
    """A float RGB 'classifier' whose scores are its input pixels, with image metadata."""
    @tf.function(input_signature=[tf.TensorSpec([1, side, side, 3], tf.float32)])
    def identity(pixels):
        return tf.reshape(pixels, [1, side * side * 3])

    model = tf.lite.TFLiteConverter.from_concrete_functions(
        [identity.get_concrete_function()], identity).convert()
    packed, record = embed_metadata(model, [str(i) for i in range(side * side * 3)],
                                    "identity", "1", "none", channels=3)
    assert record["embedded"], record
    return packed


def test_the_gates_client_decoder_feeds_what_the_task_library_feeds(tmp_path, task_library):
    # The gate's figure stands for a phone's only if its pixels are the Task Library's.
    photos = sorted(str(p) for p in make_photos(tmp_path / "photos", count=12).rglob("*.jpg"))
    (tmp_path / "identity.tflite").write_bytes(_identity_model(64))
    fed = np.array(_client(task_library, "--scores", str(tmp_path / "identity.tflite"),
                           *photos)).reshape(-1, 64, 64, 3)
    encoded = tf.constant([open(p, "rb").read() for p in photos])
    ours = client_decoder(64, 3)(encoded).numpy()
    transform = pixel_decoder(64, 3)(encoded).numpy()
    # The decoders differ (stb_image against libjpeg) and so do the bilinear roundings:
    # about one level of 255 (flowers: 1.0); Transform's antialiased pixels are further.
    ours_off, transform_off = np.abs(fed - ours).mean(), np.abs(fed - transform).mean()
    assert ours_off < 2.0 and ours_off < transform_off / 2, (ours_off, transform_off)


def _run(tmp_path) -> dict:
    data, output = make_photos(tmp_path / "photos"), tmp_path / "out"
    summary, _ = run_pipeline(data, output, "--epochs", "12", "--batch-size", "8",
                              "--learning-rate", "0.01", "--accuracy-threshold", "0")
    return summary


def _eval_files(examples_uri: str, folder) -> tuple:
    """The eval split's images written back as files, as a phone holds them; the labels."""
    folder.mkdir()
    encoded, labels = [], []
    for batch, batch_labels in split_batches(split_dir(examples_uri, EVAL)):
        encoded += batch
        labels += batch_labels.tolist()
    paths = [str(folder / f"{i:04d}.jpg") for i in range(len(encoded))]
    for path, data in zip(paths, encoded):
        with open(path, "wb") as f:
            f.write(data)
    return paths, encoded, np.array(labels)


def test_a_phone_classifies_the_eval_files_as_well_as_the_saved_model(tmp_path, task_library):
    summary = _run(tmp_path)
    tflite_dir, saved_model = summary["pushed"]["tflite"], summary["pushed"]["serving"]
    assert tflite_dir, summary["pushed"]
    info = json.loads(open(os.path.join(tflite_dir, "model_info.json")).read())
    assert info["input"]["shape"] == [512, 512, 3] and info["input"]["reduction"] == 4
    paths, encoded, labels = _eval_files(summary["data"]["examples_uri"], tmp_path / "eval")
    model = os.path.join(tflite_dir, "model.tflite")
    top = _client(task_library, model, *paths)
    phone = np.array([t["index"] for t in top])
    # The names come from the file's own metadata: the app needs no labels.txt.
    assert {t["name"] for t in top} <= set(info["labels"])
    serve = tf.saved_model.load(saved_model).signatures[SERVING_IMAGE]
    served = serve(**{IMAGE_BYTES_INPUT: tf.constant(encoded)})["probabilities"].numpy()
    right = {"saved_model": int(np.sum(served.argmax(-1) == labels)),
             "phone": int(np.sum(phone == labels))}
    tolerance = info["parity"]["tolerance"]
    drop = limits.ratio(right["saved_model"] - right["phone"], len(labels))
    assert not limits.exceeds(drop, tolerance), (right, len(labels), info["parity"])
    # The gate judged the same path: its accuracy is the phone's, within a photo.
    assert abs(info["parity"]["tflite_accuracy"] * len(labels) - right["phone"]) <= 1
    emulated = Runner(model_path=model)(client_decoder(512, 3)(tf.constant(encoded)).numpy())
    agree = np.mean(emulated["probabilities"].argmax(-1) == phone)
    assert agree >= 0.9, (agree, emulated["probabilities"].argmax(-1), phone)
