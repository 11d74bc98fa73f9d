"""The clients behind files.py for paths with a scheme (gs://, s3://, ram://, ...).

tf.io.gfile, TensorFlow's own client, which the TFX components use for the
same URIs, does most of the work; gs:// reads go through google-cloud-storage
(see `gcs_client` for why). Both clients retry transient errors themselves;
`retrying` adds a few attempts with backoff on top, for the calls whose
failure would otherwise end a run (tf.io.gfile turns a transient error during
its folder check into NotFound). Nothing here imports TensorFlow until a
remote path needs it.
"""
import time
from typing import Callable, Optional, TypeVar

T = TypeVar("T")
# Attempts, and the first delay (doubled each time), for a transient error.
RETRIES = 4
FIRST_DELAY_S = 0.5
# Pooled connections of the gs:// read client: at least the parallel readers
# (components/image_example_gen/readers/units.py REMOTE_READERS, files.read_heads).
CONNECTIONS = 32


def gfile():
    """tf.io.gfile, imported on first use."""
    import tensorflow as tf  # remote paths only: local work never imports TensorFlow
    return tf.io.gfile


def _transient(error: BaseException) -> bool:
    """Errors worth another attempt: unavailable, deadline, reset connections."""
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    name = type(error).__name__
    return name in ("UnavailableError", "DeadlineExceededError", "AbortedError",
                    "ServiceUnavailable", "TooManyRequests", "InternalServerError")


def retrying(call: Callable[[], T], what: str) -> T:
    """`call()`, retried with backoff on transient errors; `what` names it in logs."""
    delay = FIRST_DELAY_S
    for attempt in range(RETRIES):
        try:
            return call()
        except Exception as e:  # noqa: BLE001  (transient ones retried, others raised)
            if attempt == RETRIES - 1 or not _transient(e):
                raise
            import logging
            logging.warning("storage: %s failed (%s), retrying in %.1f s", what, e, delay)
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


_CLIENT = []


def gcs_client():
    """google-cloud-storage's client, made once; None if no credentials are found.

    Why not tf.io.gfile for reads: TF's GCS client opens a new TLS connection
    per request and makes several requests per file; this client (Beam's GcsIO
    uses it too) pools connections and reads an object in one request
    (measured: docs/performance.md, "Data in a bucket"). It retries reads on
    503s and resets itself. Writes stay with tf.io.gfile, whose uploads retry
    where this client's do not.
    """
    if not _CLIENT:
        try:
            import requests
            from google.cloud import storage
            client = storage.Client()
            # As many pooled connections as readers: requests' default of 10 dropped
            # the extra ones after every burst of 16 parallel reads.
            adapter = requests.adapters.HTTPAdapter(pool_maxsize=CONNECTIONS)
            for prefix in ("https://", "http://"):
                client._http.mount(prefix, adapter)  # noqa: SLF001 (the client's session)
            _CLIENT.append(client)
        except Exception as e:  # noqa: BLE001  (no credentials here: TF's client reads)
            import logging
            logging.info("storage: google-cloud-storage unavailable (%s); reading with "
                         "tf.io.gfile", e)
            _CLIENT.append(None)
    return _CLIENT[0]


def read_gcs(client, uri: str, size: Optional[int]) -> bytes:
    """A gs:// object through `client`, all of it or its first `size` bytes."""
    bucket, name = uri.split("://", 1)[1].split("/", 1)
    blob = client.bucket(bucket).blob(name)
    if size is None:  # the whole object, checked against its stored hash
        return retrying(blob.download_as_bytes, f"read {uri}")
    # A range cannot be checked against the object's hash.
    return retrying(lambda: blob.download_as_bytes(start=0, end=max(0, size - 1),
                                                   checksum=None), f"read {uri}")
