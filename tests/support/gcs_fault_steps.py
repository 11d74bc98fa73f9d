"""Steps tests/e2e/test_gcs_faults.py runs inside scripts/with_gcs.sh, on gs://imagepipe-test.

    bash scripts/with_gcs.sh --seed SEED --fail-every 7 --fail-mode 503 -- \
        .venv/bin/python -m tests.support.gcs_fault_steps --work DIR ingest push predict

Run from the repository root (`-m`, so that `tests.` imports resolve). Each step
does its real work (the `imagepipe` command, or `components.image_pusher.versions.publish`),
then checks that the result is complete, and prints one JSON line
`{"step", "ok", "error", "seconds", ...}` prefixed with RESULT_PREFIX; exits 1
if any failed. SEED must hold imagepipe-test/digits/<class>/*.png. About 20-40 s
per step on 2 cores, most of it TensorFlow's and Beam's imports.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import traceback

from tests.support import cli
from tests.support.paths import REPO

BUCKET = "gs://imagepipe-test"
DIGITS = f"{BUCKET}/digits"
RESULT_PREFIX = "FAULT_STEP "
COMMAND_TIMEOUT_S = 300
# The kill test's model: 4M floats (16 MB), so its upload takes long enough to interrupt.
BIG_VARIABLE_FLOATS = 4 * 1024 * 1024
# When the publishing child is killed: as soon as its hidden staging folder appears,
# 0.4 s into the push (in the 16 MB upload), as soon as the version folder appears.
KILL_POINTS = ("staging", 0.4, "final")


def imagepipe(*args: str) -> None:
    """Runs the `imagepipe` command; AssertionError with its output's tail if it fails."""
    cli.imagepipe(*args, timeout=COMMAND_TIMEOUT_S, check=True, stdin=subprocess.DEVNULL)


def save_module(path: str, floats: int = 16) -> str:
    """A real SavedModel of a tf.Module with a variable of `floats` floats; returns `path`."""
    import tensorflow as tf

    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.range(floats, dtype=tf.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return x * self.w[0] + tf.reduce_sum(self.w[:4])

    tf.saved_model.save(Scale(), path)
    return path


def step_ingest(work: str) -> dict:
    """`imagepipe ingest` bucket to bucket; the report and the records count every digit."""
    import tensorflow as tf
    output = f"{BUCKET}/ingested"
    imagepipe("ingest", "--data", DIGITS, "--output", output)
    with tf.io.gfile.GFile(f"{output}/ingest_report.json") as f:
        report = json.load(f)
    shards = tf.io.gfile.glob(f"{output}/train/*.tfrecord.gz") + tf.io.gfile.glob(
        f"{output}/eval/*.tfrecord.gz")
    records = sum(1 for _ in tf.data.TFRecordDataset(shards, compression_type="GZIP"))
    assert sum(report["splits"].values()) == 100, report["splits"]
    assert records == 100, f"{records} records in {len(shards)} files, not 100"
    return {"splits": report["splits"], "records": records}


def step_push(work: str) -> dict:
    """`publish` of a small SavedModel; the version is listed, loads, and matches by size."""
    import tensorflow as tf

    from components.image_pusher import versions
    from core.storage import files
    source, base = save_module(os.path.join(work, "small_model")), f"{BUCKET}/serving/m"
    version = versions.next_version(base)
    final = versions.publish(source, base, version, source_uri="x")
    assert version in versions.versions(base), versions.versions(base, complete_only=False)
    tf.saved_model.load(final)
    for info in files.walk_files(source):
        rel = os.path.relpath(info.path, source)
        assert files.size(os.path.join(final, rel)) == info.size, f"{rel}: size differs"
    return {"version": version}


def step_predict(work: str) -> dict:
    """`imagepipe predict --data` of the bucket's digits into the bucket: a row per image."""
    import pathlib

    import tensorflow as tf

    from tests.support.images import write_image
    from tests.support.transformed import export_tiny_model
    model = export_tiny_model(pathlib.Path(work) / "exported", write_image).model_dir
    output = f"{BUCKET}/preds.jsonl"
    imagepipe("predict", "--model", model, "--data", DIGITS, "--output", output)
    with tf.io.gfile.GFile(output) as f:
        rows = [json.loads(line) for line in f.read().splitlines()]
    assert len(rows) == 100, f"{len(rows)} rows, not 100"
    failed = [row for row in rows if "error" in row]
    assert not failed, failed[:3]
    return {"rows": len(rows)}


def _publish_child(source: str, base: str, version: int) -> subprocess.Popen:
    """A process that publishes `source` as `version`; it prints "start" once TensorFlow
    has loaded, so that a kill timed from that line lands in the push itself."""
    code = ("import sys\nimport tensorflow\nfrom components.image_pusher.versions import publish\n"
            "print('start', flush=True)\n"
            "publish(sys.argv[1], sys.argv[2], int(sys.argv[3]), source_uri='x')\n")
    return subprocess.Popen([sys.executable, "-c", code, source, base, str(version)],
                            cwd=REPO, stdout=subprocess.PIPE, text=True)


def _reached(point, base: str, version: int, since: float) -> bool:
    """Whether the push has reached a KILL_POINTS entry."""
    import tensorflow as tf
    if point == "staging":
        return bool(tf.io.gfile.glob(f"{base}/.{version}.partial-*"))
    if point == "final":
        return bool(tf.io.gfile.glob(f"{base}/{version}/*"))
    time.sleep(0.01)
    return time.monotonic() - since >= point


def _kill_during(source: str, base: str, version: int, point) -> str:
    """Publishes in a child and SIGKILLs it at `point`; says where the kill landed."""
    import tensorflow as tf
    child = _publish_child(source, base, version)
    try:
        assert child.stdout.readline() == "start\n", "the publishing child did not start"
        since = time.monotonic()
        while child.poll() is None and time.monotonic() - since < 60:
            if _reached(point, base, version, since):
                break
    finally:
        child.send_signal(signal.SIGKILL)  # a no-op if it already finished
        child.wait()
        child.stdout.close()
    staged = tf.io.gfile.glob(f"{base}/.{version}.partial-*")
    final = tf.io.gfile.glob(f"{base}/{version}/*")
    return ("finished first" if child.returncode == 0 else
            "during the final copy" if final else "during staging" if staged else "too early")


def step_kill(work: str) -> dict:
    """Pushes killed at several points never look complete, and the next push works."""
    import tensorflow as tf

    from components.image_pusher import versions
    source = save_module(os.path.join(work, "big_model"), BIG_VARIABLE_FLOATS)
    base, landed = f"{BUCKET}/serving/k", {}
    for point in KILL_POINTS:
        version = versions.next_version(base)
        landed[str(point)] = _kill_during(source, base, version, point)
    for version in versions.versions(base, complete_only=False):
        path = f"{base}/{version}"
        if tf.io.gfile.exists(f"{path}/saved_model.pb"):
            tf.saved_model.load(path)  # a folder with its commit file is whole
        else:
            assert version not in versions.versions(base), f"{path} listed, incomplete"
    left = versions.versions(base, complete_only=False)
    version = versions.next_version(base)
    assert not left or version > left[-1], f"next version {version} reuses one of {left}"
    tf.saved_model.load(versions.publish(source, base, version, source_uri="x"))
    assert versions.versions(base)[-1] == version, versions.versions(base)
    return {"killed": landed, "folders_left": left, "next_version": version}


STEPS = {"ingest": step_ingest, "push": step_push, "predict": step_predict, "kill": step_kill}


def run_step(name: str, work: str) -> bool:
    """Runs one step and prints its result line; True if it passed."""
    started, result = time.monotonic(), {"step": name, "ok": True, "error": None}
    try:
        result.update(STEPS[name](work))
    except Exception:  # noqa: BLE001  (reported in the result line)
        result.update(ok=False, error=traceback.format_exc()[-6000:])
    result["seconds"] = round(time.monotonic() - started, 2)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return result["ok"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="a local folder for models")
    parser.add_argument("steps", nargs="+", choices=sorted(STEPS))
    args = parser.parse_args()
    # Before TensorFlow loads: Keras 2, which TFX and TFT need (as tests/conftest.py sets).
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    results = [run_step(name, args.work) for name in args.steps]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
