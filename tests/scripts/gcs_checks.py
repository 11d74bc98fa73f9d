"""Storage checks that tests/scripts/test_with_gcs.py runs inside scripts/with_gcs.sh.

    bash scripts/with_gcs.sh -- .venv/bin/python tests/scripts/gcs_checks.py tf_gfile gcs beam

Runs the named groups of checks against gs://imagepipe-test and prints one JSON
line per check, `{"group", "check", "ok", "error", "seconds"}`, each prefixed
with RESULT_PREFIX; exits 1 if any failed. A few seconds per group after the imports.
"""
import functools
import json
import os
import random
import sys
import time
import traceback

BUCKET = "imagepipe-test"
ROOT = f"gs://{BUCKET}"
# Over google-cloud-storage's 8 MiB single-request limit, so every client uploads it resumably.
BIG_BYTES = 12 * 1024 * 1024
RESULT_PREFIX = "GCS_CHECK "


@functools.lru_cache(maxsize=None)
def big_payload() -> bytes:
    """12 MiB of fixed random bytes: a lost or misplaced chunk cannot go unnoticed."""
    return random.Random(0).randbytes(BIG_BYTES)


def tf_write_read() -> None:
    """TF gfile: a small and a 12 MiB write, each read back whole."""
    import tensorflow as tf
    small, big = f"{ROOT}/tf/small.txt", f"{ROOT}/tf/big.bin"
    with tf.io.gfile.GFile(small, "w") as f:
        f.write("hello gcs")
    with tf.io.gfile.GFile(big, "wb") as f:
        f.write(big_payload())
    with tf.io.gfile.GFile(small) as f:
        assert f.read() == "hello gcs"
    with tf.io.gfile.GFile(big, "rb") as f:
        data = f.read()
    assert data == big_payload(), f"read {len(data)} bytes, not the {BIG_BYTES} written"
    assert tf.io.gfile.stat(big).length == BIG_BYTES


def tf_listdir_rename_glob_rmtree() -> None:
    """TF gfile: listdir, rename of a file, glob and rmtree under one folder."""
    import tensorflow as tf
    folder = f"{ROOT}/tree"
    for name in ("a.txt", "b.txt", "sub/c.txt"):
        with tf.io.gfile.GFile(f"{folder}/{name}", "w") as f:
            f.write(name)
    assert sorted(tf.io.gfile.listdir(folder)) == ["a.txt", "b.txt", "sub/"]
    tf.io.gfile.rename(f"{folder}/a.txt", f"{folder}/renamed.txt")
    assert not tf.io.gfile.exists(f"{folder}/a.txt")
    with tf.io.gfile.GFile(f"{folder}/renamed.txt") as f:
        assert f.read() == "a.txt"
    assert sorted(tf.io.gfile.glob(f"{folder}/*.txt")) == [f"{folder}/b.txt",
                                                         f"{folder}/renamed.txt"]
    tf.io.gfile.rmtree(folder)
    assert not tf.io.gfile.exists(f"{folder}/b.txt")
    assert not tf.io.gfile.glob(f"{folder}/*")


def tf_records() -> None:
    """tf.io.TFRecordWriter to gs:// and tf.data.TFRecordDataset back."""
    import tensorflow as tf
    path = f"{ROOT}/records/data.tfrecord"
    records = [f"record {i}".encode() * 100 for i in range(50)]
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    assert [r.numpy() for r in tf.data.TFRecordDataset(path)] == records


def tf_saved_model() -> None:
    """tf.saved_model.save of a tiny tf.Module to gs://, and load back."""
    import tensorflow as tf

    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.factor = tf.Variable(3.0)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return x * self.factor

    path = f"{ROOT}/models/scale/1"
    tf.saved_model.save(Scale(), path)
    loaded = tf.saved_model.load(path)
    assert loaded(tf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 6.0]


def gcs_upload_download_list() -> None:
    """google-cloud-storage: upload, download and list, small and 12 MiB."""
    from google.cloud import storage
    bucket = storage.Client().bucket(BUCKET)
    bucket.blob("client/small.txt").upload_from_string(b"from the client")
    big = bucket.blob("client/big.bin", chunk_size=4 * 1024 * 1024)  # chunked resumable
    big.upload_from_string(big_payload())
    assert bucket.blob("client/small.txt").download_as_bytes() == b"from the client"
    assert bucket.blob("client/big.bin").download_as_bytes() == big_payload()
    names = [b.name for b in storage.Client().list_blobs(BUCKET, prefix="client/")]
    assert names == ["client/big.bin", "client/small.txt"], names


def gcs_read_tf_objects() -> None:
    """google-cloud-storage reads and lists what tf_write_read wrote under tf/."""
    from google.cloud import storage
    bucket = storage.Client().bucket(BUCKET)
    assert bucket.blob("tf/small.txt").download_as_bytes() == b"hello gcs"
    assert bucket.blob("tf/big.bin").download_as_bytes() == big_payload()
    names = {b.name for b in storage.Client().list_blobs(BUCKET, prefix="tf/")}
    assert names == {"tf/small.txt", "tf/big.bin"}, names


def beam_filesystems() -> None:
    """Beam FileSystems on gs://: create, match, open, rename and delete."""
    from apache_beam.io.filesystems import FileSystems

    source, target = f"{ROOT}/beam/a.txt", f"{ROOT}/beam/b.txt"
    with FileSystems.create(source) as f:
        f.write(b"from beam")
    [match] = FileSystems.match([f"{ROOT}/beam/*"])
    assert [m.path for m in match.metadata_list] == [source]
    with FileSystems.open(source) as f:
        assert f.read() == b"from beam"
    FileSystems.rename([source], [target])
    assert not FileSystems.exists(source) and FileSystems.exists(target)
    FileSystems.delete([target])
    assert not FileSystems.exists(target)


# A group's checks run in order, and may read what an earlier one wrote.
GROUPS = {
    "tf_gfile": [tf_write_read, tf_listdir_rename_glob_rmtree],
    "tf_records": [tf_records],
    "tf_saved_model": [tf_saved_model],
    "gcs": [gcs_upload_download_list],
    "beam": [beam_filesystems],
    # For injected faults: what the clients retry (TF reads and writes, the client's reads).
    # The SavedModel's many requests put a fault on a data PUT, whose recovery needs the
    # proxy's status-poll fix; without it variables.index is saved empty and the load fails.
    "retried": [tf_write_read, tf_records, tf_saved_model, gcs_read_tf_objects],
}


def run_check(group: str, check) -> bool:
    """Runs one check and prints its result line."""
    start = time.monotonic()
    try:
        check()
        error = ""
    except Exception:  # noqa: BLE001 - every failure is reported, then the next check runs
        error = traceback.format_exc()
    result = {"group": group, "check": check.__name__, "ok": not error, "error": error,
              "seconds": round(time.monotonic() - start, 2)}
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return not error


def main(groups: list) -> int:
    """Runs the named groups; 0 if every check passed."""
    unknown = set(groups) - set(GROUPS)
    if unknown or not groups:
        print(f"usage: gcs_checks.py GROUP...; groups: {', '.join(GROUPS)}", file=sys.stderr)
        return 2
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # before TensorFlow loads
    del sys.argv[1:]  # Beam parses sys.argv as its pipeline options, and warns at each call
    results = [run_check(group, check) for group in groups for check in GROUPS[group]]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
