"""resolve_model: which model `imagepipe predict --model PATH` loads; top_k ordering."""
import numpy as np
import pytest

from pipeline.errors import UsageError
from pipeline.prediction.predict import resolve_model, top_k


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
