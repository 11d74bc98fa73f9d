"""The ImagePusher executor: pushes only blessed models, as a new complete version."""
import dataclasses
import json
import os
import shutil

import pytest

from tfx.types import standard_artifacts, standard_component_specs
from tfx.proto import pusher_pb2
from tfx.utils import proto_utils

from components.image_pusher.executor import EXAMPLES_KEY, Executor
from components.versions import provenance
from components.image_pusher.warmup import WARMUP_FILE
from components.parameters import encode
from pipeline.config import PipelineConfig

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _run(tmp_path, blessed: bool, pushed_name: str = "pushed", tflite: bool = False,
         saved_model: str = None):
    """The executor on a Model artifact holding `saved_model` (a copy)."""
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    if not os.path.exists(os.path.join(model.uri, "Format-Serving")):
        shutil.copytree(saved_model, os.path.join(model.uri, "Format-Serving"))
    blessing = standard_artifacts.ModelBlessing()
    blessing.uri = str(tmp_path / "blessing")
    blessing.set_int_custom_property("blessed", int(blessed))
    pushed = standard_artifacts.PushedModel()
    pushed.uri = str(tmp_path / pushed_name)
    destination = pusher_pb2.PushDestination(filesystem=pusher_pb2.PushDestination.Filesystem(
        base_directory=str(tmp_path / "serving" / "digits")))
    inputs = {standard_component_specs.MODEL_KEY: [model],
              standard_component_specs.MODEL_BLESSING_KEY: [blessing]}
    settings = dataclasses.replace(PipelineConfig().push_settings(), tflite_dir=None)
    if tflite:  # examples without splits: int8 has no images to calibrate on
        examples = standard_artifacts.Examples()
        examples.uri = str(tmp_path / "examples")
        inputs[EXAMPLES_KEY] = [examples]
        settings = dataclasses.replace(settings, tflite_dir=str(tmp_path / "tflite"),
                                       quantize="int8", parity_tolerance=0.01)
    properties = {standard_component_specs.PUSH_DESTINATION_KEY:
                  proto_utils.proto_to_json(destination),
                  **encode(settings)}
    Executor().Do(inputs, {standard_component_specs.PUSHED_MODEL_KEY: [pushed]}, properties)
    return pushed


def test_blessed_model_is_pushed_as_a_version_with_serving_configs(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir)
    assert pushed.get_int_custom_property("pushed") == 1
    version = pushed.get_string_custom_property("pushed_version")
    destination = pushed.get_string_custom_property("pushed_destination")
    assert destination == str(tmp_path / "serving" / "digits" / version)
    assert {"saved_model.pb", "variables", "assets.extra"} <= set(os.listdir(destination))
    assert os.path.getsize(os.path.join(destination, WARMUP_FILE)) > 0
    check = json.loads(pushed.get_string_custom_property("serving_check"))
    assert check["ok"] and check["rest_requests"] > 0, check
    # Which Model artifact it came from: the Kubeflow target's baseline step reads it.
    assert provenance(destination)["source_uri"] == str(tmp_path / "model")
    assert set(os.listdir(tmp_path / "serving")) == {"digits", "models.config",
                                                     "batching.config"}


def test_unblessed_model_pushes_nothing(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=False, saved_model=exported_model.model_dir)
    assert pushed.get_int_custom_property("pushed") == 0
    assert not (tmp_path / "serving").exists()


def test_a_re_run_after_an_interrupted_push_reuses_its_version(tmp_path, exported_model):
    # The first Pusher published, then failed or was killed before finishing; its
    # re-run must not serve the same model again under a second version.
    first = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir)
    again = _run(tmp_path, blessed=True, pushed_name="pushed-again")
    assert again.get_string_custom_property("pushed_version") == \
        first.get_string_custom_property("pushed_version")
    assert os.listdir(tmp_path / "serving" / "digits") == [
        first.get_string_custom_property("pushed_version")]


def test_a_failed_tflite_conversion_still_pushes_the_saved_model_and_says_why(tmp_path,
                                                                              exported_model):
    pushed = _run(tmp_path, blessed=True, tflite=True, saved_model=exported_model.model_dir)
    assert pushed.get_int_custom_property("pushed") == 1
    assert pushed.get_string_custom_property("tflite_destination") == ""
    gate = json.loads(pushed.get_string_custom_property("tflite_parity"))
    assert gate["ok"] is False and gate["reason"].startswith("TFLite conversion failed: ")


def test_a_model_that_cannot_be_served_is_not_pushed_and_says_why(tmp_path):
    broken = tmp_path / "broken"
    (broken / "variables").mkdir(parents=True)
    (broken / "saved_model.pb").write_bytes(b"graph")  # no real SavedModel
    pushed = _run(tmp_path, blessed=True, saved_model=str(broken))
    assert pushed.get_int_custom_property("pushed") == 0
    check = json.loads(pushed.get_string_custom_property("serving_check"))
    assert check["ok"] is False and check["reason"].startswith("the SavedModel did not load")
    assert not (tmp_path / "serving" / "digits").exists() or not os.listdir(
        tmp_path / "serving" / "digits")
