"""The release stages' executors in a row (InfraValidator, TFLiteConverter,
ModelCardGenerator, Pusher): only models both blessings pass are pushed, as complete
versions."""
import dataclasses
import json
import os
import shutil

import pytest

from tfx.types import standard_artifacts, standard_component_specs as keys
from tfx.types.experimental.simple_artifacts import File
from tfx.proto import pusher_pb2
from tfx.utils import proto_utils

from components.image_pusher.executor import EXAMPLES_KEY, Executor
from components.model_card import executor as card_executor
from components.serving_validator import executor as infra_executor
from components.tflite_converter import executor as tflite_executor
from components.image_pusher.versions import (ServingState, provenance, serving_state,
                                              write_serving_state)
from components.serving_validator.warmup import WARMUP_FILE
from core.contract import (MODEL_CARD_KEY, MONITOR_REFERENCE_FILE, MONITORING_DIR,
                           TFLITE_MODEL_KEY, TRAIN_STATISTICS_FILE)
from core.parameters import encode
from settings.config import PipelineConfig

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work
STAGES = {}  # the PushedModel's URI: the outputs of the stages before it (_stages)


def _artifact(kind, uri):
    artifact = kind()
    artifact.uri = str(uri)
    return artifact


def _run(tmp_path, blessed: bool, pushed_name: str = "pushed", tflite: bool = False,
         saved_model: str = None, report: dict = None, spans: str = None,
         accuracy: float = None, allow_drift: bool = False, model_name: str = "model",
         audit: dict = None, drift: dict = None, monitoring: dict = None):
    """The four executors on a Model artifact holding `saved_model` (a copy); with
    `report`, an Examples input whose ingest_report.json it is (and `spans` its
    property); with `audit`, the Evaluator's audit.json in the blessing; with `drift`,
    the drift verdict the Evaluator recorded on it; with `monitoring` ({name: bytes}), the
    Evaluator's monitoring/ folder in it. Returns the PushedModel; STAGES[its URI] holds
    the stages' outputs."""
    model = _artifact(standard_artifacts.Model, tmp_path / model_name)
    if not os.path.exists(os.path.join(model.uri, "Format-Serving")):
        shutil.copytree(saved_model, os.path.join(model.uri, "Format-Serving"))
    blessing = _artifact(standard_artifacts.ModelBlessing, tmp_path / "blessing")
    blessing.set_int_custom_property("blessed", int(blessed))
    if audit is not None:
        os.makedirs(blessing.uri, exist_ok=True)
        with open(os.path.join(blessing.uri, "audit.json"), "w") as f:
            json.dump(audit, f)
    for name, data in (monitoring or {}).items():
        os.makedirs(os.path.join(blessing.uri, MONITORING_DIR), exist_ok=True)
        with open(os.path.join(blessing.uri, MONITORING_DIR, name), "wb") as f:
            f.write(data)
    if accuracy is not None:
        blessing.set_float_custom_property("accuracy", accuracy)
    if drift is not None:
        blessing.set_string_custom_property("drift", json.dumps(drift))
    config = PipelineConfig.from_values(model_name="digits", allow_drift=allow_drift)
    inputs = {keys.MODEL_KEY: [model], keys.MODEL_BLESSING_KEY: [blessing]}
    if tflite or report is not None:  # examples without splits: int8 has no images
        inputs[EXAMPLES_KEY] = [_examples(tmp_path, report, spans)]
    stages = _stages(tmp_path / pushed_name, inputs, config, tflite)
    pushed = _artifact(standard_artifacts.PushedModel, tmp_path / pushed_name)
    destination = pusher_pb2.PushDestination(filesystem=pusher_pb2.PushDestination.Filesystem(
        base_directory=str(tmp_path / "serving" / "digits")))
    settings = dataclasses.replace(config.push_settings(), tflite_dir=(
        str(tmp_path / "tflite") if tflite else None))
    Executor().Do(inputs, {keys.PUSHED_MODEL_KEY: [pushed]},
                  {keys.PUSH_DESTINATION_KEY: proto_utils.proto_to_json(destination),
                   **encode(settings)})
    STAGES[pushed.uri] = stages
    return pushed


def _stages(root, inputs: dict, config: PipelineConfig, tflite: bool) -> dict:
    """Runs the InfraValidator, the TFLiteConverter (with `tflite`) and the card's step,
    adding each output to `inputs` as the DAG wires it; returns the outputs."""
    infra = _artifact(standard_artifacts.InfraBlessing, root / "infra")
    infra_executor.Executor().Do(inputs, {keys.BLESSING_KEY: [infra]},
                                 encode(config.serving_check_settings()))
    inputs[keys.INFRA_BLESSING_KEY] = [infra]
    stages = {"infra": infra}
    if tflite:
        converted = _artifact(standard_artifacts.Model, root / "tflite")
        tflite_executor.Executor().Do(inputs, {TFLITE_MODEL_KEY: [converted]},
                                      encode(config.tflite_settings()))
        inputs[TFLITE_MODEL_KEY] = stages["tflite"] = [converted]
    card = _artifact(File, root / "card")
    card_executor.Executor().Do(inputs, {MODEL_CARD_KEY: [card]},
                                encode(config.card_settings()))
    inputs[MODEL_CARD_KEY] = [card]
    stages["card"] = card
    return stages


def _examples(tmp_path, report, spans):
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    os.makedirs(examples.uri, exist_ok=True)
    if report is not None:
        with open(os.path.join(examples.uri, "ingest_report.json"), "w") as f:
            json.dump(report, f)
    if spans is not None:
        examples.set_string_custom_property("spans", spans)
    return examples


def _monitoring_files(tmp_path) -> dict:
    """The Evaluator's monitoring/ files, as its reference writer makes them."""
    import numpy as np
    from components.image_evaluator.monitoring_reference import STATISTICS_FILE, write_reference
    statistics = tmp_path / "statistics"
    (statistics / "Split-train").mkdir(parents=True)
    (statistics / "Split-train" / STATISTICS_FILE).write_bytes(b"\x0a\x07\x0a\x05train")
    folder = write_reference(str(tmp_path / "evaluated"), ["c0", "c1"], np.array([0, 1, 1]),
                             np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3]]), 0.625,
                             str(statistics))
    return {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}


def test_blessed_model_is_pushed_as_a_version_with_serving_configs(tmp_path, exported_model):
    monitoring = _monitoring_files(tmp_path)
    pushed = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir,
                  audit={"examples": 8, "accuracy": 0.625},  # an audit with parts missing
                  monitoring=monitoring)
    assert pushed.get_int_custom_property("pushed") == 1
    version = pushed.get_string_custom_property("pushed_version")
    destination = pushed.get_string_custom_property("pushed_destination")
    assert destination == str(tmp_path / "serving" / "digits" / version)
    assert {"saved_model.pb", "variables", "assets.extra"} <= set(os.listdir(destination))
    assert os.path.getsize(os.path.join(destination, WARMUP_FILE)) > 0
    check = json.loads(STAGES[pushed.uri]["infra"].get_string_custom_property("serving_check"))
    assert check["ok"] and check["rest_requests"] > 0, check
    assert STAGES[pushed.uri]["infra"].get_int_custom_property("has_model") == 1
    # Which Model artifact it came from: the Kubeflow target's baseline step reads it.
    assert provenance(destination)["source_uri"] == str(tmp_path / "model")
    assert set(os.listdir(tmp_path / "serving")) == {"digits", "models.config",
                                                     "batching.config"}
    # The model card ships inside the version, and the push records where.
    card_path = os.path.join(destination, "assets.extra", "model_card.json")
    assert pushed.get_string_custom_property("model_card") == card_path
    assert provenance(destination)["model_card"] == "assets.extra/model_card.json"
    card = json.loads(open(card_path).read())
    assert card["model_details"]["name"] == "digits"
    assert card["model_details"]["version"]["name"] == version
    assert card["model_parameters"]["model_architecture"] == "mnist_cnn"
    assert {"key": "image_size", "value": "8x8"} in card["model_parameters"]["input_format_map"]
    assert {"type": "accuracy", "value": "0.6250", "slice": "overall (8 eval examples)",
            "confidence_interval": {"lower_bound": "0.3057", "upper_bound": "0.8632"}} in \
        card["quantitative_analysis"]["performance_metrics"]  # Wilson's for 5 of 8
    html = open(os.path.join(destination, "assets.extra", "model_card.html")).read()
    assert "Model Card for digits" in html and "0.6250" in html
    # The Evaluator's monitoring reference ships inside the version, as it wrote it.
    shipped = os.path.join(destination, "assets.extra", MONITORING_DIR)
    assert sorted(os.listdir(shipped)) == [MONITOR_REFERENCE_FILE, TRAIN_STATISTICS_FILE]
    assert {name: open(os.path.join(shipped, name), "rb").read()
            for name in os.listdir(shipped)} == monitoring


def test_unblessed_model_pushes_nothing(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=False, saved_model=exported_model.model_dir)
    assert pushed.get_int_custom_property("pushed") == 0
    assert not (tmp_path / "serving").exists()
    # Each later stage says why it did nothing, on its own output.
    infra = STAGES[pushed.uri]["infra"]
    assert infra.get_int_custom_property("blessed") == 0
    assert infra.get_string_custom_property("reason") == \
        "not checked: the Evaluator did not bless the model"
    assert not infra.has_custom_property("serving_check")
    assert STAGES[pushed.uri]["card"].get_int_custom_property("written") == 0


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
    converted = STAGES[pushed.uri]["tflite"][0]
    assert converted.get_int_custom_property("converted") == 0
    assert converted.get_string_custom_property("reason").startswith("TFLite conversion failed: ")
    assert json.loads(converted.get_string_custom_property("tflite_parity"))["ok"] is False


def test_a_model_that_cannot_be_served_is_not_pushed_and_says_why(tmp_path):
    broken = tmp_path / "broken"
    (broken / "variables").mkdir(parents=True)
    (broken / "saved_model.pb").write_bytes(b"graph")  # no real SavedModel
    pushed = _run(tmp_path, blessed=True, saved_model=str(broken))
    assert pushed.get_int_custom_property("pushed") == 0
    infra = STAGES[pushed.uri]["infra"]
    check = json.loads(infra.get_string_custom_property("serving_check"))
    assert check["ok"] is False and check["reason"].startswith("the SavedModel did not load")
    assert infra.get_int_custom_property("blessed") == 0
    assert os.path.exists(os.path.join(infra.uri, "INFRA_NOT_BLESSED"))
    assert not os.path.exists(os.path.join(infra.uri, "stamped_model"))
    assert not (tmp_path / "serving" / "digits").exists() or not os.listdir(
        tmp_path / "serving" / "digits")


# The ingest report of a span window: its drift entry only says which spans were compared.
SPANS_REPORT = {"spans": [{"span": 3}],
                "drift": {"span": 3, "previous_span": 2, "compared": True, "reason": None}}


def _verdict(verdict="drift"):
    """The verdict the Evaluator records on the blessing (components/drift_validator/verdict.py)."""
    features = {name: {"value": 0.0, "threshold": 0.2, "drifted": False,
                       "detail": "unchanged"} for name in ("label", "grayscale")}
    features["size"] = {"value": 0.0, "threshold": 0.3, "drifted": False, "detail": "same"}
    features["brightness"] = {"value": 0.6, "threshold": 0.1, "drifted": verdict == "drift",
                              "detail": "mean brightness 130 -> 20 of 255"}
    return {"verdict": verdict, "features": features, "span": 3, "previous_span": 2,
            "drifted": ["brightness"] if verdict == "drift" else []}


def test_the_version_records_spans_and_the_evaluators_accuracy(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir,
                  report=SPANS_REPORT, drift=_verdict("ok"), spans="2,3", accuracy=0.875)
    record = provenance(pushed.get_string_custom_property("pushed_destination"))
    assert record["spans"] == [2, 3] and record["accuracy"] == 0.875
    assert "drift_overridden" not in record and not pushed.has_custom_property("blocked")
    # A blessing without monitoring/ (written before the Evaluator made it) still pushes.
    assert MONITORING_DIR not in os.listdir(os.path.join(
        pushed.get_string_custom_property("pushed_destination"), "assets.extra"))


def test_drift_blocks_the_push_and_says_which_feature(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir,
                  report=SPANS_REPORT, drift=_verdict())
    assert pushed.get_int_custom_property("pushed") == 0
    blocked = pushed.get_string_custom_property("blocked")
    assert "brightness" in blocked and "mean brightness 130 -> 20 of 255" in blocked
    assert blocked.endswith("(--allow-drift pushes anyway)")
    assert not (tmp_path / "serving").exists()


def test_allow_drift_pushes_and_records_the_override(tmp_path, exported_model):
    pushed = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir,
                  report=SPANS_REPORT, drift=_verdict(), allow_drift=True)
    assert pushed.get_int_custom_property("pushed") == 1
    overridden = pushed.get_string_custom_property("drift_overridden")
    assert overridden.startswith("pushed despite drift in brightness")
    record = provenance(pushed.get_string_custom_property("pushed_destination"))
    assert record["drift_overridden"] == overridden and record["spans"] == [3]


def test_a_new_push_lifts_a_rollbacks_pin_and_a_rolled_back_model_stays_out(tmp_path,
                                                                            exported_model):
    base = str(tmp_path / "serving" / "digits")
    first = _run(tmp_path, blessed=True, saved_model=exported_model.model_dir)
    version = int(first.get_string_custom_property("pushed_version"))
    write_serving_state(base, ServingState(pinned=version - 1, rolled_back=(version,)))
    again = _run(tmp_path, blessed=True, pushed_name="pushed-again")  # same model: revoked
    assert again.get_int_custom_property("pushed") == 0
    assert "rollback" in again.get_string_custom_property("blocked")
    assert serving_state(base).pinned == version - 1
    _run(tmp_path, blessed=True, pushed_name="pushed-new", saved_model=exported_model.model_dir,
         model_name="new-model")  # trained on new data
    assert serving_state(base) == ServingState(None, (version,))
    assert "model_version_policy" not in (tmp_path / "serving" / "models.config").read_text()
