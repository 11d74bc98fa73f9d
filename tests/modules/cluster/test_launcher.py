"""The local launcher: distinct loopback ports, one task each, and every worker reaped."""
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from modules.cluster import launcher


def test_each_worker_gets_the_same_cluster_and_its_own_task():
    configs = [json.loads(c) for _, c in launcher.tf_configs(3)]
    addresses = configs[0]["cluster"]["worker"]
    assert len(set(addresses)) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [c["task"] for c in configs] == [{"type": "worker", "index": i} for i in range(3)]
    assert all(c["cluster"] == configs[0]["cluster"] for c in configs)


def test_parameter_servers_add_a_chief_first_and_the_ps_tasks():
    tasks = launcher.tf_configs(2, ps=1)
    assert [name for name, _ in tasks] == ["chief 0", "worker 0", "worker 1", "ps 0"]
    cluster = json.loads(tasks[0][1])["cluster"]
    assert {job: len(a) for job, a in cluster.items()} == {"chief": 1, "worker": 2, "ps": 1}
    assert len({a for addresses in cluster.values() for a in addresses}) == 4


@pytest.mark.integration  # real worker processes, and the grace period
def test_workers_that_ignore_sigterm_are_killed():
    # A worker waiting for its peers ignores SIGTERM (TF's preemption notifier catches it).
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
         "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, start_new_session=True)
    stubborn.stdout.readline()  # the handler is installed
    started = time.monotonic()
    launcher.stop([stubborn])
    assert stubborn.returncode == -9 and time.monotonic() - started < 10


def _task(name: str, code: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    process.task_name = name
    return process


def test_the_first_failed_worker_is_named_with_its_log(tmp_path):
    (tmp_path / "worker-1.log").write_text("Traceback ...\nValueError: boom\n")
    ok = _task("worker 0", "import time; time.sleep(30)")
    failed = _task("worker 1", "raise SystemExit(3)")
    try:
        launcher._wait([ok, failed], str(tmp_path))  # noqa: SLF001
        raise AssertionError("no error")
    except RuntimeError as e:
        assert "worker 1 (of 2 tasks) failed (exit code 3)" in str(e) and "boom" in str(e)
    finally:
        launcher.stop([ok, failed])
    assert ok.returncode is not None


def test_with_parameter_servers_the_run_ends_with_the_chief(tmp_path):
    chief = _task("chief 0", "pass")
    server = _task("ps 0", "import time; time.sleep(60)")  # serves until stopped
    try:
        launcher._wait([chief, server], str(tmp_path), everyone=False)  # noqa: SLF001
        assert chief.returncode == 0 and server.poll() is None
    finally:
        launcher.stop([chief, server])
    assert server.returncode is not None


@pytest.mark.integration  # real task processes
def test_a_killed_tasks_temp_files_go_with_the_run(tmp_path):
    # The task writes a temp file, as TF's autograph does, and is killed before its exit
    # handlers could remove it: the file was in the run's own folder, removed with it.
    report = tmp_path / "temp.txt"
    code = ("import os, sys, tempfile; f = tempfile.NamedTemporaryFile(delete=False); "
            f"open({str(report)!r}, 'w').write(f.name); os._exit(5)")
    with pytest.raises(RuntimeError, match=r"worker 0 \(of 1 tasks\) failed \(exit code 5\)"):
        launcher.run_tasks([("worker 0", "{}", [sys.executable, "-c", code])], everyone=True)
    left = report.read_text()
    assert os.path.dirname(left) != tempfile.gettempdir() and not os.path.exists(left)
