"""PushedWarmStart's executor on a push destination laid out as the Pusher writes it."""
import json
import os

from tfx.types import standard_artifacts

from components.image_pusher.provenance import INFO_FILE, ORIGIN_FILE, WARM_START_DIR, WEIGHTS_FILE
from components.image_pusher.versions import ServingState, publish, write_serving_state
from components.pushed_warm_start import executor
from components.pushed_warm_start.component import PushedWarmStart


def _trainer_output(root, execution: int) -> str:
    """A Trainer's Model artifact as TFX lays it out: Format-Serving and warm_start."""
    uri = os.path.join(root, "tfx", "Trainer", "model", str(execution))
    os.makedirs(os.path.join(uri, "Format-Serving", "variables"))
    with open(os.path.join(uri, "Format-Serving", "saved_model.pb"), "wb") as f:
        f.write(b"graph")
    os.makedirs(os.path.join(uri, WARM_START_DIR))
    with open(os.path.join(uri, WARM_START_DIR, WEIGHTS_FILE), "wb") as f:
        f.write(b"weights %d" % execution)
    with open(os.path.join(uri, WARM_START_DIR, INFO_FILE), "w") as f:
        json.dump({"model": "cnn"}, f)
    return uri


def _run(tmp_path, serving_dir: str):
    """One execution; returns its output Model artifact."""
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "pushed_warm_start" / "model")
    executor.Executor().Do({}, {executor.MODEL_KEY: [model]},
                           {executor.SERVING_DIR_KEY: serving_dir})
    return model


def _destination(tmp_path):
    """Versions 100 and 200 pushed from Trainer executions 1 and 2: the serving folder and
    {version: model URI}."""
    serving_dir = str(tmp_path / "serving" / "digits")
    uris = {}
    for version, execution in ((100, 1), (200, 2)):
        uris[version] = _trainer_output(tmp_path, execution)
        publish(os.path.join(uris[version], "Format-Serving"), serving_dir, version,
                source_uri=uris[version], record={"spans": [execution], "accuracy": 0.9})
    return serving_dir, uris


def test_the_served_versions_weights_with_its_number(tmp_path):
    serving_dir, uris = _destination(tmp_path)
    model = _run(tmp_path, serving_dir)
    assert model.get_int_custom_property(executor.NO_WARM_START) == 0
    assert model.get_int_custom_property(executor.PUSHED_VERSION) == 200
    assert model.get_string_custom_property(executor.SOURCE_URI) == uris[200]
    folder = os.path.join(model.uri, WARM_START_DIR)
    with open(os.path.join(folder, WEIGHTS_FILE), "rb") as f:
        assert f.read() == b"weights 2"
    with open(os.path.join(folder, ORIGIN_FILE)) as f:
        assert json.load(f)["version"] == 200


def test_after_a_rollback_the_pinned_versions(tmp_path):
    serving_dir, _ = _destination(tmp_path)
    write_serving_state(serving_dir, ServingState(pinned=100, rolled_back=(200,)))
    model = _run(tmp_path, serving_dir)
    assert model.get_int_custom_property(executor.PUSHED_VERSION) == 100


def test_a_first_run_gets_an_artifact_marked_empty_with_the_reason(tmp_path):
    model = _run(tmp_path, str(tmp_path / "serving" / "digits"))
    assert model.get_int_custom_property(executor.NO_WARM_START) == 1
    assert model.get_string_custom_property(executor.REASON) == "nothing pushed yet"
    assert not model.has_custom_property(executor.PUSHED_VERSION)
    assert os.listdir(os.path.join(model.uri, WARM_START_DIR)) == [ORIGIN_FILE]


def test_the_component_has_no_inputs_and_a_model_output():
    component = PushedWarmStart(serving_dir="gs://b/serving/digits")
    assert not component.inputs and list(component.outputs) == [executor.MODEL_KEY]
    assert component.exec_properties[executor.SERVING_DIR_KEY] == "gs://b/serving/digits"
