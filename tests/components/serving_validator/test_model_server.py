"""--model-server: the check's REST requests answered by a model server binary over HTTP.

The binary here is rest_model_server.py, a stand-in with tensorflow_model_server's
flags and REST API (no machine here has the C++ server).
"""
import dataclasses
import os
import stat
import sys

import pytest

from components.serving_validator.validate import validate_serving
from settings.config import PipelineConfig

pytestmark = pytest.mark.integration  # real TensorFlow and a served model

STAND_IN = os.path.join(os.path.dirname(__file__), "rest_model_server.py")


def _binary(tmp_path, command: str) -> str:
    """An executable file that runs `command` with the server's flags, as a binary would."""
    path = tmp_path / "tensorflow_model_server"
    path.write_text(f"#!/bin/sh\nexec {command} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _settings(binary: str):
    settings = PipelineConfig.from_values(model_name="digits").serving_check_settings()
    return dataclasses.replace(settings, model_server=binary, rest_requests=8, timeout_s=120)


def test_a_model_server_loads_the_model_and_answers_the_rest_requests(exported_model,
                                                                      tmp_path):
    binary = _binary(tmp_path, f"env PYTHONPATH={os.getcwd()} {sys.executable} {STAND_IN}")
    result = validate_serving(exported_model.model_dir, exported_model.examples_uri,
                              _settings(binary), str(tmp_path / "stamped"))
    assert result["ok"], result
    assert result["server"] == binary and result["rest_requests"] > 0
    assert result["max_abs_diff"] <= 1e-4 and result["p50_ms"] > 0
    assert (tmp_path / "stamped" / "assets.extra" / "tf_serving_warmup_requests").exists()


def test_a_model_server_that_exits_fails_the_check_and_says_why(exported_model, tmp_path):
    binary = _binary(tmp_path, "sh -c 'echo \"Failed to start server: port taken\"; exit 3' x")
    result = validate_serving(exported_model.model_dir, exported_model.examples_uri,
                              _settings(binary), str(tmp_path / "stamped"))
    assert not result["ok"]
    assert result["reason"] == (f"the model server: {binary} exited with code 3: "
                                "Failed to start server: port taken")
    assert not (tmp_path / "stamped").exists()


def test_a_local_run_refuses_a_model_server_that_is_not_an_executable(tmp_path):
    from cli.commands import _check_model_server
    from core.errors import UsageError
    with pytest.raises(UsageError, match="--model-server .*: not an executable file"):
        _check_model_server(str(tmp_path / "missing"))


def test_a_model_server_that_cannot_start_fails_the_check_and_leaves_nothing(exported_model,
                                                                             tmp_path):
    missing = str(tmp_path / "no" / "tensorflow_model_server")
    result = validate_serving(exported_model.model_dir, exported_model.examples_uri,
                              _settings(missing), str(tmp_path / "stamped"))
    assert not result["ok"]
    assert result["reason"].startswith(f"the model server: {missing} could not be started: ")
