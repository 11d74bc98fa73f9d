"""scripts/with_gcs.sh: TensorFlow, google-cloud-storage and Beam work on its fake GCS.

Each run starts the script as a subprocess with tests/scripts/gcs_checks.py as
its command. Needs root; about 30 s in all, most of it TensorFlow's and Beam's imports.
"""
import json
import os
import pathlib
import shutil
import subprocess
from typing import Optional

import pytest

from tests.support.gcs_harness import NEEDS_ROOT
from tests.support.paths import PYTHON, REPO, TESTS, WITH_GCS

pytestmark = [pytest.mark.integration, NEEDS_ROOT]

CHECKS = TESTS / "scripts" / "gcs_checks.py"
RESULT_PREFIX = "GCS_CHECK "  # gcs_checks.RESULT_PREFIX; test modules do not import each other
TIME_LIMIT_S = 240


def with_gcs(*args: str, tmp: pathlib.Path,
             env: Optional[dict] = None) -> subprocess.CompletedProcess:
    """Runs scripts/with_gcs.sh with its state folder under `tmp`.

    `timeout` sends TERM, which the script turns into the namespace's end, so a
    hung run leaves no server behind.
    """
    return subprocess.run(
        ["timeout", str(TIME_LIMIT_S), "bash", str(WITH_GCS), *args], cwd=REPO, text=True,
        capture_output=True, stdin=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(tmp), **(env or {})})


def run_checks(*groups: str, tmp: pathlib.Path, options: tuple = (),
               env: Optional[dict] = None) -> dict:
    """Runs gcs_checks.py's groups in one with_gcs.sh run; {group: [result, ...]}."""
    result = with_gcs(*options, "--", str(PYTHON), str(CHECKS), *groups, tmp=tmp, env=env)
    lines = [line[len(RESULT_PREFIX):] for line in result.stdout.splitlines()
             if line.startswith(RESULT_PREFIX)]
    by_group = {}
    for check in map(json.loads, lines):
        by_group.setdefault(check["group"], []).append(check)
    assert by_group, f"no results (exit {result.returncode}):\n{result.stderr[-4000:]}"
    return by_group


def assert_passed(results: dict, group: str) -> None:
    """Every check of the group ran and passed; the failures' tracebacks if not."""
    failed = [f"{c['check']}:\n{c['error']}" for c in results.get(group, []) if not c["ok"]]
    assert group in results and not failed, "\n".join(failed) or f"{group} did not run"


def left_behind(tmp: pathlib.Path) -> list:
    """Processes whose command line names the run's state folder (server, proxy)."""
    found = subprocess.run(["pgrep", "-af", str(tmp)], capture_output=True, text=True)
    return found.stdout.splitlines()


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """One run of every check group without faults, and /etc/hosts before it."""
    tmp = tmp_path_factory.mktemp("with_gcs")
    hosts_before = pathlib.Path("/etc/hosts").read_bytes()
    results = run_checks("tf_gfile", "tf_records", "tf_saved_model", "gcs", "beam", tmp=tmp)
    return {"results": results, "hosts_before": hosts_before, "tmp": tmp}


def test_tf_gfile_writes_reads_lists_renames_globs_and_removes(clean_run):
    assert_passed(clean_run["results"], "tf_gfile")


def test_tf_records_round_trip(clean_run):
    assert_passed(clean_run["results"], "tf_records")


def test_tf_saved_model_round_trip(clean_run):
    assert_passed(clean_run["results"], "tf_saved_model")


def test_google_cloud_storage_uploads_downloads_and_lists(clean_run):
    assert_passed(clean_run["results"], "gcs")


def test_beam_filesystems_create_match_open_rename_delete(clean_run):
    assert_passed(clean_run["results"], "beam")


def test_the_host_is_left_as_it_was(clean_run):
    assert pathlib.Path("/etc/hosts").read_bytes() == clean_run["hosts_before"]
    assert not left_behind(clean_run["tmp"])
    assert not list(clean_run["tmp"].glob("with_gcs.*")), "state folder not removed"


def test_tf_and_client_reads_survive_injected_503s(tmp_path):
    log = tmp_path / "gcs.log"
    results = run_checks(
        "retried", tmp=tmp_path,
        options=("--fail-every", "5", "--fail-mode", "503", "--keep-log", str(log)),
        env={"GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "100000"})  # TF's backoff: 0.1 s, not 1 s
    assert_passed(results, "retried")
    assert "INJECTED 503" in log.read_text()
    assert not left_behind(tmp_path)


def test_the_exit_status_is_the_commands(tmp_path):
    result = with_gcs("--", "sh", "-c", "exit 7", tmp=tmp_path)
    assert result.returncode == 7, result.stderr


def test_seeded_objects_are_served_from_extra_buckets(tmp_path):
    seed = tmp_path / "seed" / "other-bucket" / "labels"
    seed.mkdir(parents=True)
    (seed / "labels.txt").write_text("cat\ndog\n")
    fetch = ("import urllib.request; print(urllib.request.urlopen("
             "'https://storage.googleapis.com/other-bucket/labels/labels.txt').read().decode())")
    result = with_gcs("--bucket", "other-bucket", "--seed", str(tmp_path / "seed"), "--",
                      str(PYTHON), "-c", fetch, tmp=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "cat\ndog\n\n"


def test_a_missing_server_binary_names_the_install(tmp_path):
    # A checkout whose .venv lacks the wheel: the binary lookup finds nothing.
    (tmp_path / "scripts").mkdir()
    shutil.copy(WITH_GCS, tmp_path / "scripts")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    result = subprocess.run(["bash", str(tmp_path / "scripts" / "with_gcs.sh"), "--", "true"],
                            capture_output=True, text=True, env={**os.environ, "FAKE_GCS_BIN": ""})
    assert result.returncode == 2
    assert "fake-gcs-server binary not found" in result.stderr
    assert "scripts/install.sh" in result.stderr


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv to drop root")
def test_non_root_is_refused_clearly(tmp_path):
    result = subprocess.run(
        ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
         "bash", str(WITH_GCS), "--", "true"], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2 and "needs root for unshare" in result.stderr
