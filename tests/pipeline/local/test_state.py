"""The local state folder: a killed Trainer's decode cache is removed, a live one's never."""
import os
import subprocess
import sys

from core.contract import decode_cache_folder, decode_cache_owner
from settings.config import PipelineConfig
from pipeline.local import state


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_dead_processes_caches_are_removed_and_live_ones_kept(tmp_path):
    root = state.decode_cache_root(str(tmp_path))
    live = decode_cache_folder(root, "7", os.getpid())
    dead = decode_cache_folder(root, "8", _dead_pid())
    other = os.path.join(root, "not-a-cache")
    for folder in (live, dead, other):
        os.makedirs(folder)
    assert state.prepare(str(tmp_path)) == [os.path.basename(dead)]
    assert sorted(os.listdir(root)) == sorted([os.path.basename(live), "not-a-cache"])


def test_cache_folder_names_carry_their_process():
    assert decode_cache_owner(os.path.basename(decode_cache_folder("/r", "12", 345))) == 345
    assert decode_cache_owner("12") is None and decode_cache_owner(".pid3") is None


def test_the_state_folder_is_the_output_when_local_and_named_for_a_bucket(tmp_path):
    assert PipelineConfig.from_values(output=str(tmp_path)).state_path == str(tmp_path)
    remote = PipelineConfig.from_values(output="gs://b/run", pipeline_name="flowers").state_path
    assert remote.startswith(os.path.expanduser("~/.cache/imagepipe/flowers-"))
    assert remote == PipelineConfig.from_values(output="gs://b/run/").state_path.replace(
        "imagepipe-", "flowers-")  # one folder per output, whatever the trailing slash
    given = PipelineConfig.from_values(output="gs://b/run", state_dir=str(tmp_path / "s"))
    assert given.state_path == str(tmp_path / "s")
    assert given.metadata_path == str(tmp_path / "s" / "metadata.sqlite")
