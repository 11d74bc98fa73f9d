"""The ImagePusher executor: pushes only blessed models, as a new complete version."""
import os

from tfx.types import standard_artifacts, standard_component_specs
from tfx.proto import pusher_pb2
from tfx.utils import proto_utils

from components.image_pusher.executor import Executor
from components.image_pusher.versions import provenance


def _run(tmp_path, blessed: bool):
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    os.makedirs(os.path.join(model.uri, "Format-Serving", "variables"))
    with open(os.path.join(model.uri, "Format-Serving", "saved_model.pb"), "wb") as f:
        f.write(b"graph")
    blessing = standard_artifacts.ModelBlessing()
    blessing.uri = str(tmp_path / "blessing")
    blessing.set_int_custom_property("blessed", int(blessed))
    pushed = standard_artifacts.PushedModel()
    pushed.uri = str(tmp_path / "pushed")
    destination = pusher_pb2.PushDestination(filesystem=pusher_pb2.PushDestination.Filesystem(
        base_directory=str(tmp_path / "serving" / "digits")))
    Executor().Do({standard_component_specs.MODEL_KEY: [model],
                   standard_component_specs.MODEL_BLESSING_KEY: [blessing]},
                  {standard_component_specs.PUSHED_MODEL_KEY: [pushed]},
                  {standard_component_specs.PUSH_DESTINATION_KEY:
                   proto_utils.proto_to_json(destination)})
    return pushed


def test_blessed_model_is_pushed_as_a_version_with_serving_configs(tmp_path):
    pushed = _run(tmp_path, blessed=True)
    assert pushed.get_int_custom_property("pushed") == 1
    version = pushed.get_string_custom_property("pushed_version")
    destination = pushed.get_string_custom_property("pushed_destination")
    assert destination == str(tmp_path / "serving" / "digits" / version)
    assert set(os.listdir(destination)) == {"saved_model.pb", "variables", "assets.extra"}
    # Which Model artifact it came from: the Kubeflow target's baseline step reads it.
    assert provenance(destination)["source_uri"] == str(tmp_path / "model")
    assert set(os.listdir(tmp_path / "serving")) == {"digits", "models.config",
                                                     "batching.config"}


def test_unblessed_model_pushes_nothing(tmp_path):
    pushed = _run(tmp_path, blessed=False)
    assert pushed.get_int_custom_property("pushed") == 0
    assert not (tmp_path / "serving").exists()
