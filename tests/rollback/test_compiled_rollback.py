"""Versions and rollback on a compiled pipeline's push destination: an object store with no
local state folder and no local ML Metadata store; and the next compiled run's baseline
(components/pushed_baseline/) honours the pin until a new push lifts it."""
import json
import os
import time
import uuid

import pytest

from core.storage import files
from components.image_pusher.versions import ServingState, read_pointer, serving_state
from components.image_pusher.push import PushInputs, push
from components.image_pusher.settings import PushSettings
from components.pushed_baseline.latest import latest_other_than
from cli import main as cli
from settings.config import PipelineConfig
from rollback.bucket_lock import LOCK_OBJECT
from rollback.rollback import describe, rollback
from pipeline.local.lock import output_lock
from tests.rollback.pushes import VERSIONS, push_versions
from tests.support.models import stand_in_model


@pytest.fixture
def compiled(tmp_path, monkeypatch) -> PipelineConfig:
    """Versions 100, 200, 300 under a compile's --pipeline-root on TF's in-memory store
    (shared by the process: one root per test); HOME is tmp_path/home, where a state
    folder would go. That store appends to a file written twice, so models.config and
    the TFLite pointer are left for the rollback to write (tests/rollback/
    test_rollback_bucket.py replaces them in a real bucket)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = PipelineConfig.from_values(output=f"ram://compiled-{uuid.uuid4().hex[:8]}/root")
    push_versions(config, VERSIONS, str(tmp_path))
    return config


def _served(config: PipelineConfig) -> dict:
    return json.loads(files.read_text(os.path.join(config.run.output, "serving", "served.json")))


def test_rollback_on_a_pipeline_root_makes_no_state_folder_and_says_what_it_skipped(
        compiled, tmp_path, capsys):
    assert cli.main(["rollback", "--output", compiled.run.output]) == 0
    said = capsys.readouterr().out
    assert "serving version 200 (was 300)" in said
    assert "no local ML Metadata" in said and "pause its recurring run" in said
    assert _served(compiled) == {"imagepipe": {"pinned": 200, "rolled_back": [300]}}
    assert read_pointer(compiled.tflite_dir) == 100  # 200 has no TFLite
    models_config = files.read_text(os.path.join(compiled.run.output, "serving", "models.config"))
    assert "specific { versions: 200 }" in models_config
    assert not files.exists(os.path.join(compiled.run.output, LOCK_OBJECT))  # released
    assert not (tmp_path / "home").exists()  # no state folder, no lock file, no store


def test_versions_lists_a_pipeline_root(compiled, capsys):
    assert cli.main(["versions", "--output", compiled.run.output]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"imagepipe in {compiled.serving_dir}"
    assert [line.split()[0] for line in lines[2:]] == ["100", "200", "300"]
    assert lines[-1].endswith("served")


def test_a_rollback_holding_the_lock_object_turns_the_next_one_away(compiled, capsys):
    files.write_text(os.path.join(compiled.run.output, LOCK_OBJECT), json.dumps(
        {"host": "elsewhere", "pid": 7, "started": time.time()}))
    assert cli.main(["rollback", "--output", compiled.run.output]) == 2
    assert "another imagepipe rollback is using it (host elsewhere, pid 7" in \
        capsys.readouterr().err
    assert serving_state(compiled.serving_dir) == ServingState(None, ())


def test_a_bucket_output_that_local_runs_use_keeps_their_run_lock(compiled, tmp_path,
                                                                  capsys):
    state = tmp_path / "state"
    state.mkdir()
    with output_lock(str(state)):
        assert cli.main(["rollback", "--output", compiled.run.output, "--state-dir",
                         str(state)]) == 2
    assert "another imagepipe run is using it" in capsys.readouterr().err
    assert serving_state(compiled.serving_dir) == ServingState(None, ())


def test_without_a_store_the_rollback_is_not_recorded_and_says_so(pushed):
    plan = rollback(pushed.config, None)
    assert not plan.recorded
    said = describe(plan, pushed.config)
    assert "no ML Metadata store here" in said
    assert "Kubeflow" not in said  # a local output: the run lock kept runs out


def _push_new(config: PipelineConfig, scratch, spans) -> int:
    """What the Pusher does with a newly blessed model trained on `spans`."""
    model = stand_in_model(scratch / "new")
    tflite = scratch / "new_tflite"
    tflite.mkdir()
    (tflite / "model.tflite").write_bytes(b"tflite")
    uri = os.path.join(config.pipeline_root, "Trainer", "model", "new")
    outcome = push(PushInputs(str(model), uri, config.serving_dir, {"spans": spans},
                              str(tflite)), PushSettings(config.tflite_dir, False))
    assert outcome.pushed, outcome.blocked
    return outcome.version


def test_the_compiled_baseline_is_the_pinned_version_until_a_new_push(pushed, tmp_path):
    config = pushed.config
    rollback(config, None)  # 300 -> 200
    other = os.path.join(config.pipeline_root, "Trainer", "model", "next")
    assert latest_other_than(config.serving_dir, other) == os.path.join(config.serving_dir,
                                                                        "200")
    new = _push_new(config, tmp_path, spans=[4])
    assert serving_state(config.serving_dir) == ServingState(None, (300,))  # pin lifted
    assert read_pointer(config.tflite_dir) == new
    assert "specific" not in files.read_text(os.path.join(config.run.output, "serving",
                                                          "models.config"))
    assert latest_other_than(config.serving_dir, other).endswith(str(new))
    newest = os.path.join(config.pipeline_root, "Trainer", "model", "new")
    assert latest_other_than(config.serving_dir, newest).endswith("200")  # 300 stays out
