"""Checks, before any work, that a path a flag names can be read or written.

A missing bucket, a missing prefix or a refused request must stop a run at
once with the flag and the URI, not an hour later inside a component.
"""
import os
import uuid

from core.storage import files
from core.storage.files import StorageError


def _reason(error: BaseException) -> str:
    """The first line of a storage error, without TensorFlow's status prefix."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _bucket_exists(bucket: str) -> bool:
    """Whether the bucket exists; raises if the store refuses or cannot be reached.

    On gs://, google-cloud-storage tells a refusal (HTTP 403) from a missing
    bucket (404); tf.io.gfile answers False to both.
    """
    client = files.gcs_client() if files.scheme(bucket) == "gs" else None
    if client is None:
        return files.isdir(bucket)
    name = bucket.split("://", 1)[1]
    return files.retrying(lambda: client.bucket(name).exists(), f"bucket {bucket}")


def _check_bucket(uri: str, flag: str) -> None:
    """The bucket of `uri` exists and answers; raises StorageError naming both."""
    bucket = files.bucket_of(uri)
    try:
        found = _bucket_exists(bucket)
    except Exception as e:  # noqa: BLE001  (refused, unreachable: say which, exit 2)
        refused = getattr(e, "code", None) == 403 or "403" in type(e).__name__ \
            or type(e).__name__ in ("Forbidden", "PermissionDeniedError")
        why = "access refused (403)" if refused else "cannot reach it"
        raise StorageError(f"{flag} {uri}: {why} for {bucket}: {_reason(e)}") from None
    if not found:
        raise StorageError(f"{flag} {uri}: bucket {bucket} does not exist (or is not "
                           "visible to these credentials)")


def check_readable(uri: str, flag: str) -> None:
    """`uri` exists; in a bucket, the bucket is checked first, for a clearer message."""
    if files.has_buckets(uri):
        _check_bucket(uri, flag)
    try:
        found = files.exists(uri)
    except Exception as e:  # noqa: BLE001
        raise StorageError(f"{flag} {uri}: cannot read: {_reason(e)}") from None
    if not found:
        raise StorageError(f"{flag} {uri}: no such file or directory")


def check_writable(uri: str, flag: str) -> None:
    """A file can be created and deleted under the folder `uri` (created if missing)."""
    if files.has_buckets(uri):
        _check_bucket(uri, flag)
    probe = os.path.join(uri, f".imagepipe-write-test-{uuid.uuid4().hex[:8]}")
    try:
        files.makedirs(uri)
        files.write_bytes(probe, b"")
        files.remove(probe)
    except Exception as e:  # noqa: BLE001
        reason = getattr(e, "strerror", None) or _reason(e)
        raise StorageError(f"{flag} {uri}: not writable ({reason})") from None
