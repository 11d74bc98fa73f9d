"""The steps of tests/e2e/test_gcs.py, run inside `scripts/with_gcs.sh` (a real GCS server).

    bash scripts/with_gcs.sh --deny-bucket locked -- \
        .venv/bin/python -m tests.support.gcs_e2e_steps RESULTS.json WORKDIR

Uploads the bundled digits, runs `imagepipe run`, `predict`, `monitor` and bad-input
commands against gs://imagepipe-test, and
writes what each step returned and found to RESULTS.json for the test to check.
"""
import gzip
import json
import os
import sys
import time

from tests.support.gcs_harness import command
from tests.support.paths import EXAMPLE_MODULE, IMAGEPIPE, MNIST_IDX, MNIST_PNG

BUCKET = "gs://imagepipe-test"


def _command(*args, timeout=900) -> dict:
    return command(*args, cwd=WORKDIR, timeout=timeout)


def _imagepipe(*args, **kwargs) -> dict:
    return _command(str(IMAGEPIPE), *args, **kwargs)


def upload_digits() -> dict:
    """data/mnist_1k/png to the bucket through TensorFlow's client; and a 100-digit subset."""
    from core.storage.tree_copy import copy_tree
    import tensorflow as tf
    started = time.monotonic()
    copied = copy_tree(str(MNIST_PNG), f"{BUCKET}/mnist", fs=tf.io.gfile)
    for label in sorted(os.listdir(MNIST_PNG)):
        for name in sorted(os.listdir(os.path.join(MNIST_PNG, label)))[:10]:
            tf.io.gfile.copy(os.path.join(MNIST_PNG, label, name),
                             f"{BUCKET}/digits/{label}/{name}", overwrite=True)
    # Zero-byte "directory" markers, as some upload tools write them: listing must skip them.
    from google.cloud import storage
    bucket = storage.Client().bucket(BUCKET[len("gs://"):])
    for marker in ("mnist/", "mnist/3/", "digits/"):
        bucket.blob(marker).upload_from_string(b"")
    return {"files": len(copied), "seconds": round(time.monotonic() - started, 1)}


def run_pipeline() -> dict:
    """`imagepipe run` with data and output in the bucket; what it left there."""
    import tensorflow as tf
    # 20 epochs, not the planned 40: what is checked here is where the run reads and writes
    # (the time budget's decision too); the half-width cnn scored 0.898 on all 1,000 after 10.
    result = _imagepipe("run", "--data", f"{BUCKET}/mnist", "--output", f"{BUCKET}/run",
                        "--state-dir", os.path.join(WORKDIR, "state"), "--epochs", "20")
    if result["code"] != 0:
        return result
    with tf.io.gfile.GFile(f"{BUCKET}/run/summary.json") as f:
        summary = json.load(f)
    version = summary["pushed"]["serving"]
    extra = tf.io.gfile.listdir(f"{version}/assets.extra")
    loaded = tf.saved_model.load(version)
    return {**result, "summary": summary, "assets_extra": sorted(extra),
            "signatures": sorted(loaded.signatures.keys()),
            "tflite": sorted(tf.io.gfile.listdir(summary["pushed"]["tflite"])),
            "report": tf.io.gfile.exists(f"{BUCKET}/run/report/index.html"),
            "models_config": tf.io.gfile.exists(f"{BUCKET}/run/serving/models.config"),
            "state": sorted(os.listdir(os.path.join(WORKDIR, "state")))}


def predict() -> dict:
    """Batch prediction from the bucket into the bucket, with the pushed model there."""
    import tensorflow as tf
    result = _imagepipe("predict", "--model", f"{BUCKET}/run/serving/imagepipe",
                        "--data", f"{BUCKET}/mnist", "--output", f"{BUCKET}/preds.jsonl")
    if result["code"] == 0:
        with tf.io.gfile.GFile(f"{BUCKET}/preds.jsonl") as f:
            result["rows"] = [json.loads(line) for line in f]
    return result


def monitor() -> dict:
    """`imagepipe monitor` of a window of digits in the bucket, against the version pushed
    there, its JSON and report written to the bucket; labels read from the bucket too."""
    from core.storage import files
    labels = ["id,label"]
    for label in sorted(os.listdir(MNIST_PNG)):
        for name in sorted(os.listdir(os.path.join(MNIST_PNG, label)))[-5:]:
            files.copy(os.path.join(MNIST_PNG, label, name), f"{BUCKET}/window/{label}-{name}")
            labels.append(f"{label}-{name},{label}")
    files.write_text(f"{BUCKET}/window-labels.csv", "\n".join(labels) + "\n")
    result = _imagepipe("monitor", "--output", f"{BUCKET}/run", "--data", f"{BUCKET}/window",
                        "--labels", f"{BUCKET}/window-labels.csv",
                        "--json", f"{BUCKET}/monitoring/monitor.json")
    if files.exists(f"{BUCKET}/monitoring/monitor.json"):
        result["json"] = json.loads(files.read_text(f"{BUCKET}/monitoring/monitor.json"))
    result["written"] = sorted(files.listdir(f"{BUCKET}/monitoring")) \
        if files.isdir(f"{BUCKET}/monitoring") else []
    return result


def formats() -> dict:
    """IDX, .npz and TFRecords in the bucket, each ingested into the bucket."""
    import numpy as np
    import tensorflow as tf
    from components.image_example_gen.readers.arrays import parse_idx
    from core.storage import files
    idx = str(MNIST_IDX)
    for name in os.listdir(idx):
        tf.io.gfile.copy(os.path.join(idx, name), f"{BUCKET}/idx/{name}", overwrite=True)
    arrays = {f"{kind}_{split}": parse_idx(gzip.decompress(
                  files.read_bytes(f"{BUCKET}/idx/{prefix}-{name}")), name)
              for split, prefix in (("train", "train"), ("test", "t10k"))
              for kind, name in (("x", "images-idx3-ubyte.gz"), ("y", "labels-idx1-ubyte.gz"))}
    local = os.path.join(WORKDIR, "digits.npz")
    np.savez(local, **arrays)
    tf.io.gfile.copy(local, f"{BUCKET}/npz/digits.npz", overwrite=True)
    found = {}
    for fmt, data in (("idx", "idx"), ("npz", "npz"), ("tfrecord", "ingested-idx")):
        result = _imagepipe("ingest", "--data", f"{BUCKET}/{data}",
                            "--output", f"{BUCKET}/ingested-{fmt}")
        if result["code"] == 0:
            result["report"] = json.loads(files.read_text(
                f"{BUCKET}/ingested-{fmt}/ingest_report.json"))
        found[fmt] = result
    return found


def dedupe() -> dict:
    """`imagepipe ingest --dedupe` of digits with planted exact copies, bucket to bucket."""
    import tensorflow as tf
    from core.storage import files
    for path in tf.io.gfile.glob(f"{BUCKET}/digits/*/*.png"):
        label, name = path.split("/")[-2:]
        tf.io.gfile.copy(path, f"{BUCKET}/dupes/{label}/{name}", overwrite=True)
        if label in ("1", "7"):  # ten digits each: a later copy of every one
            tf.io.gfile.copy(path, f"{BUCKET}/dupes/{label}/z-{name}", overwrite=True)
    result = _imagepipe("ingest", "--data", f"{BUCKET}/dupes", "--dedupe",
                        "--output", f"{BUCKET}/ingested-dedupe")
    if result["code"] == 0:
        result["report"] = json.loads(files.read_text(
            f"{BUCKET}/ingested-dedupe/ingest_report.json"))
        result["written"] = [f"{top}/{name}" for top, _, names in
                             tf.io.gfile.walk(f"{BUCKET}/ingested-dedupe") for name in names]
        result["examples"] = sum(
            1 for path in tf.io.gfile.glob(f"{BUCKET}/ingested-dedupe/*/data-*")
            for _ in tf.data.TFRecordDataset(path, compression_type="GZIP"))
    return result


def files_in_the_bucket() -> dict:
    """--module-file, --config and --weights read from the bucket by `imagepipe plan`."""
    import tensorflow as tf
    tf.io.gfile.copy(str(EXAMPLE_MODULE), f"{BUCKET}/code/net.py", overwrite=True)
    with tf.io.gfile.GFile(f"{BUCKET}/code/flags.yaml", "w") as f:
        f.write("epochs: 3\nbatch_size: 16\n")
    module = _imagepipe("plan", "--data", f"{BUCKET}/digits", "--module-file",
                        f"{BUCKET}/code/net.py", "--config", f"{BUCKET}/code/flags.yaml")
    from modules.networks.backbones import build_network
    local = os.path.join(WORKDIR, "mnv2_notop.h5")
    build_network("mobilenet_v2", 32, None).save_weights(local)
    tf.io.gfile.copy(local, f"{BUCKET}/code/mnv2_notop.h5", overwrite=True)
    weights = _imagepipe("plan", "--data", f"{BUCKET}/digits", "--model", "mobilenet_v2",
                         "--weights", f"{BUCKET}/code/mnv2_notop.h5", "--image-size", "32")
    return {"module_and_config": module, "weights": weights}


def bad_inputs() -> dict:
    """Each must exit 2, naming the URI, before anything runs."""
    return {
        "missing_bucket": _imagepipe("plan", "--data", "gs://no-such-bucket/photos"),
        "refused": _imagepipe("plan", "--data", "gs://locked/photos"),
        "missing_prefix": _imagepipe("run", "--data", f"{BUCKET}/no/such/prefix",
                                     "--output", f"{BUCKET}/never"),
        "output_bucket": _imagepipe("run", "--data", f"{BUCKET}/digits",
                                    "--output", "gs://no-such-bucket/run"),
        "state_dir": _imagepipe("run", "--data", f"{BUCKET}/digits", "--output",
                                f"{BUCKET}/never", "--state-dir", f"{BUCKET}/state"),
    }


def main(results_path: str) -> None:
    results = {}
    for step in (upload_digits, run_pipeline, predict, monitor, formats, dedupe,
                 files_in_the_bucket, bad_inputs):
        try:
            results[step.__name__] = step()
        except Exception:  # noqa: BLE001  (the test shows it; later steps still run)
            import traceback
            results[step.__name__] = {"code": "raised", "stdout": "",
                                      "stderr": traceback.format_exc()[-3000:]}
        with open(results_path, "w") as f:  # what ran so far, even if a later step hangs
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    WORKDIR = sys.argv[2]
    main(sys.argv[1])
