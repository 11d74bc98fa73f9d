"""`imagepipe run` end to end with a user's module file, and with a fine-tuned backbone."""
import hashlib
import json
import os
import shutil

import pytest

from tests.support.cli import imagepipe, read_summary
from tests.support.generated_photos import make_photos
from tests.support.paths import EXAMPLE_MODULE

pytestmark = pytest.mark.slow


def _run(*args) -> str:
    """`imagepipe run ARGS...`, which must succeed; its stdout."""
    return imagepipe("run", *args, check=True).stdout


def test_the_example_module_file_trains_ships_and_reruns_when_edited(tmp_path):
    module, output = tmp_path / "tiny_convnet.py", tmp_path / "out"
    shutil.copy(EXAMPLE_MODULE, module)
    flags = ["--module-file", str(module), "--output", str(output), "--train-steps", "120",
             "--accuracy-threshold", "0.5", "--quantize", "dynamic"]
    stdout = _run(*flags)
    assert f"module file {module} (sha256 " in stdout
    summary = read_summary(output)
    assert summary["model_source"] == {
        "kind": "module_file", "name": "module", "path": str(module), "augment": True,
        "sha256": hashlib.sha256(module.read_bytes()).hexdigest()}
    assert summary["eval"]["accuracy"] >= 0.5
    assert summary["pushed"]["serving"] and summary["pushed"]["tflite"]
    # Unchanged: the Trainer is cached. Edited: it trains again.
    assert "Trainer" in _summary_after(flags, output)["cached"]
    module.write_text(module.read_text() + "\n# tuned\n")
    assert "Trainer" not in _summary_after(flags, output)["cached"]


def _summary_after(flags, output):
    _run(*flags)
    return read_summary(output)


def _backbone_file(output):
    found = sorted((output / "tfx" / "Trainer" / "model_run").rglob("backbone_weights.h5"))
    assert len(found) == 1, found
    return found[0]


def test_a_backbone_saved_by_one_run_is_fine_tuned_in_two_phases_by_the_next(tmp_path):
    photos = make_photos(tmp_path / "photos")
    common = ["--data", str(photos), "--model", "mobilenet_v2", "--image-size", "32",
              "--batch-size", "8", "--accuracy-threshold", "0"]
    first = tmp_path / "first"
    _run(*common, "--weights", "none", "--train-steps", "4", "--quantize", "none",
         "--output", str(first))
    weights, second = _backbone_file(first), tmp_path / "second"
    stdout = _run(*common, "--weights", str(weights), "--train-steps", "12",
                  "--output", str(second))
    assert "phase 1:" in stdout and "phase 2:" in stdout
    assert " head  loss" in stdout and "fine-tune: " in stdout and " fine-tune  loss" in stdout
    summary = read_summary(second)
    assert summary["model_source"] == {
        "kind": "backbone", "name": "mobilenet_v2", "weights": str(weights),
        "weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}
    phases = [p["phase"] for p in summary["training"]["phases"]]
    assert phases == ["head", "fine-tune"]
    tflite = summary["pushed"]["tflite"]
    assert tflite and json.loads(
        (second / "tflite" / "imagepipe" / os.path.basename(tflite) / "model_info.json")
        .read_text())["quantization"] == "int8"
