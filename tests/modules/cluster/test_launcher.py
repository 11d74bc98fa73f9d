"""The local launcher: distinct loopback ports, one task each, and every worker reaped."""
import json
import subprocess
import sys
import time

from modules.cluster import launcher


def test_each_worker_gets_the_same_cluster_and_its_own_task():
    configs = [json.loads(c) for c in launcher.tf_configs(3)]
    addresses = configs[0]["cluster"]["worker"]
    assert len(set(addresses)) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [c["task"] for c in configs] == [{"type": "worker", "index": i} for i in range(3)]
    assert all(c["cluster"] == configs[0]["cluster"] for c in configs)


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


def test_the_first_failed_worker_is_named_with_its_log(tmp_path):
    (tmp_path / "worker-1.log").write_text("Traceback ...\nValueError: boom\n")
    ok = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                          start_new_session=True)
    failed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    try:
        launcher._wait([ok, failed], str(tmp_path))  # noqa: SLF001
        raise AssertionError("no error")
    except RuntimeError as e:
        assert "worker 1 of 2 failed (exit code 3)" in str(e) and "boom" in str(e)
    finally:
        launcher.stop([ok, failed])
    assert ok.returncode is not None
