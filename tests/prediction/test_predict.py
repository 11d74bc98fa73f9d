"""resolve_model: which model `imagepipe predict --model PATH` loads; top_k ordering."""
import numpy as np
import pytest

from core.errors import UsageError
from prediction.predict import resolve_model, top_k


def test_a_serving_base_folder_resolves_to_its_latest_version(tmp_path):
    for version in ("9", "10", "notes"):
        (tmp_path / version).mkdir()
    for version in ("9", "10"):
        (tmp_path / version / "saved_model.pb").write_bytes(b"")
    assert resolve_model(str(tmp_path)) == ("saved_model", str(tmp_path / "10"))
    assert resolve_model(str(tmp_path / "9")) == ("saved_model", str(tmp_path / "9"))


def test_a_tflite_file_is_taken_as_it_is(tmp_path):
    (tmp_path / "model.tflite").write_bytes(b"")
    assert resolve_model(str(tmp_path / "model.tflite")) == ("tflite",
                                                             str(tmp_path / "model.tflite"))


@pytest.mark.parametrize("name", ["empty", "missing", "model.tflite.bak"])
def test_anything_else_is_a_usage_error_naming_the_flag(tmp_path, name):
    (tmp_path / "empty").mkdir()
    (tmp_path / "model.tflite.bak").write_bytes(b"")
    with pytest.raises(UsageError, match=f"--model {tmp_path / name}: not a SavedModel"):
        resolve_model(str(tmp_path / name))


def test_top_k_is_best_first():
    assert top_k(np.array([0.1, 0.7, 0.2]), ["a", "b", "c"], 2) == [("b", 0.7), ("c", 0.2)]


# --- `imagepipe predict --log`: a PredictionLog the monitor reads -------------

@pytest.mark.integration  # real TensorFlow on the exported model
def test_the_log_holds_a_predict_log_per_classified_image(tmp_path, exported_model):
    from tensorflow_serving.apis import prediction_log_pb2

    from components.image_example_gen.readers.tfrecords import iter_records
    from monitor.readers.registry import detect_format, read_window
    from prediction.predict import Predictor, predict_files
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(exported_model.images[0].read_bytes()[:60])
    images = [str(p) for p in exported_model.images[:3]] + [str(corrupt)]
    log = tmp_path / "logs" / "requests.tfrecord"
    lines, errors = predict_files(exported_model.model_dir, images, 2, log=str(log))
    assert errors == 1 and len(lines) == 4
    [first, *_] = [prediction_log_pb2.PredictionLog.FromString(r) for r in iter_records(str(log))]
    spec = first.predict_log.request.model_spec  # a folder outside a <name>/<version> layout
    assert (spec.name, spec.HasField("version"), spec.signature_name) == (
        "model", False, "serving_image")
    assert list(first.predict_log.request.inputs) == ["image_bytes"]
    assert first.predict_log.response.outputs["probabilities"].tensor_shape.dim[1].size == 2
    assert detect_format(str(log)) == "prediction_log"
    records = list(read_window(str(log)))
    predictor = Predictor(exported_model.model_dir)
    assert [r.image for r in records] == [p.read_bytes() for p in exported_model.images[:3]]
    for record in records:
        np.testing.assert_allclose(record.probabilities, predictor.probabilities(record.image),
                                   atol=1e-6)


def test_log_with_data_is_a_usage_error_pointing_at_the_jsonl_output(tmp_path):
    from cli.main import build_parser
    from cli.commands import command_predict
    from settings import flags
    args = build_parser().parse_args(["predict", "--model", str(tmp_path), "--data",
                                      str(tmp_path), "--output", "p.jsonl", "--log", "r.tfr"])
    with pytest.raises(UsageError, match="--log is for IMAGE... files; with --data, the "
                                         "--output FILE.jsonl"):
        command_predict(*flags.parse(args))
