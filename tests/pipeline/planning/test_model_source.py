"""Model sources: module files and backbone weights, planned and refused before ingestion."""
import os

import pytest

from settings.config import PipelineConfig
from core.errors import UsageError
from pipeline.planning.model_source import read_source
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import make_plan, plan_lines
from tests.support.cli import imagepipe
from tests.support.paths import EXAMPLE_MODULE

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work

GB = 1 << 30
PHOTOS = DataFacts(5, 2400, 600, 500, 400, 4000, 3)
DIGITS = DataFacts(10, 800, 200, 28, 28, 28, 1)
EXAMPLE = str(EXAMPLE_MODULE)


def _plan(facts, **flags):
    config = PipelineConfig.from_values(**flags)
    return make_plan(config, facts, "cpu", 24 * GB, read_source(config))


def test_a_pretrained_backbone_plans_two_phases_and_says_so(tmp_path):
    weights = tmp_path / "mnv2.h5"
    weights.write_bytes(b"any bytes: hashed here, loaded by check_model")
    p = _plan(PHOTOS, model="mobilenet_v2", weights=str(weights))
    params = p.trainer_params()
    assert (
    p.config.model.image_size,
    p.config.training.epochs,
    p.config.evaluation.accuracy_threshold) == (
        128,
        12,
         0.8)
    assert params.fine_tunes and params.weights == str(weights)
    assert len(params.weights_sha256) == 64 and 0 < params.head_share < 1
    text = "\n".join(plan_lines(p))
    assert "phase 1: 4 epochs train the new head, backbone frozen" in text
    assert "phase 2: 8 epochs also train the backbone's top blocks" in text
    assert f"weights {weights} (sha256 {params.weights_sha256[:12]})" in text
    assert p.to_json()["values"]["phases"] == {"head_epochs": 4, "fine_tune_epochs": 8,
                                               "fine_tune_learning_rate": pytest.approx(1e-4)}


def test_a_backbone_without_weights_trains_in_one_phase_like_the_photo_model():
    p = _plan(PHOTOS, model="resnet50", weights="none")
    assert not p.trainer_params().fine_tunes and p.trainer_params().weights is None
    assert p.config.evaluation.accuracy_threshold == 0.7 and "phase 1" not in "\n".join(
        plan_lines(p))


def test_imagenet_is_the_default_weights_of_a_backbone():
    p = _plan(PHOTOS, model="efficientnet_b0")
    assert p.source.weights == "imagenet" and p.trainer_params().fine_tunes


def test_a_module_file_carries_its_text_and_takes_the_datas_defaults():
    p = _plan(DIGITS, module_file=EXAMPLE)
    params = p.trainer_params()
    assert params.model == "module" and params.module_source == open(EXAMPLE).read()
    assert p.source.to_json() == {"kind": "module_file", "name": "module",
                                  "path": os.path.abspath(EXAMPLE),
                                  "sha256": params.module_sha256, "augment": True}
    assert (
    p.config.model.image_size,
    p.config.evaluation.accuracy_threshold) == (
        28,
         0.9)  # the cnn's
    assert "the module file's augment(images, params)" in "\n".join(plan_lines(p))


@pytest.mark.parametrize("flags, words", [
    ({"module_file": EXAMPLE, "model": "cnn"}, "--module-file and --model cnn both"),
    ({"model": "photo", "weights": "imagenet"}, "--weights applies to the backbones only"),
    ({"model": "resnet50", "weights": "/nonexistent/w.h5"}, "--weights /nonexistent/w.h5: "
                                                            "no such file"),
    ({"module_file": "/nonexistent/m.py"}, "--module-file /nonexistent/m.py: cannot be read"),
])
def test_flags_that_cannot_apply_are_refused_naming_them(flags, words):
    with pytest.raises(UsageError, match=words):
        read_source(PipelineConfig.from_values(**flags))


@pytest.mark.parametrize("module, words", [
    ("def build_model(input_shape, num_classes, params):\n    return (\n",
     "bad.py, line 2: SyntaxError"),
    ("import tf_keras as keras\n\ndef build_model(input_shape, num_classes, params):\n"
     "    inputs = keras.Input(shape=input_shape)\n"
     "    x = keras.layers.Flatten()(inputs)\n"
     "    return keras.Model(inputs, keras.layers.Dense(3, activation='softmax')(x))\n",
     "outputs (None, 3); expected (None, 10)"),
])
def test_a_bad_module_file_exits_2_before_ingestion(tmp_path, module, words):
    path = tmp_path / "bad.py"
    path.write_text(module)
    out = tmp_path / "out"
    result = imagepipe("run", "--module-file", str(path), "--output", str(out), timeout=180)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert words in result.stderr and str(path) in result.stderr
    assert not (out / "tfx").exists()  # nothing ingested


def test_a_weights_file_of_another_backbone_exits_2_naming_it(tmp_path):
    import tf_keras as keras
    path = tmp_path / "mnv2_notop.h5"
    keras.applications.MobileNetV2(include_top=False, weights=None,
                                   input_shape=(32, 32, 3)).save_weights(str(path))
    result = imagepipe("run", "--model", "resnet50", "--weights", str(path),
                       "--output", str(tmp_path / "out"), timeout=180)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"--weights {path}: could not be loaded into resnet50" in result.stderr
    assert "expected a Keras weights file of resnet50" in result.stderr
    assert not (tmp_path / "out" / "tfx").exists()
