"""Checks, before any work, that a path a flag names can be read or written.

A missing bucket, a missing prefix or a refused request must stop a run at
once with the flag and the URI, not an hour later inside a component.
"""
import os
import uuid

from components.storage import files
from components.storage.files import StorageError


def _reason(error: BaseException) -> str:
    """The first line of a storage error, without TensorFlow's status prefix."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _check_bucket(uri: str, flag: str) -> None:
    """The bucket of `uri` exists and answers; raises StorageError naming both."""
    bucket = files.bucket_of(uri)
    try:
        found = files.isdir(bucket)
    except Exception as e:  # noqa: BLE001  (refused, unreachable: say which, exit 2)
        raise StorageError(f"{flag} {uri}: cannot reach {bucket}: {_reason(e)}") from None
    if not found:
        raise StorageError(f"{flag} {uri}: bucket {bucket} does not exist (or is not "
                           "visible to these credentials)")


def check_readable(uri: str, flag: str) -> None:
    """`uri` exists; for a remote URI its bucket is checked first, for a clearer message."""
    if files.is_remote(uri):
        _check_bucket(uri, flag)
    try:
        found = files.exists(uri)
    except Exception as e:  # noqa: BLE001
        raise StorageError(f"{flag} {uri}: cannot read: {_reason(e)}") from None
    if not found:
        raise StorageError(f"{flag} {uri}: no such file or directory")


def check_writable(uri: str, flag: str) -> None:
    """A file can be created and deleted under the folder `uri` (created if missing)."""
    if files.is_remote(uri):
        _check_bucket(uri, flag)
    probe = os.path.join(uri, f".imagepipe-write-test-{uuid.uuid4().hex[:8]}")
    try:
        files.makedirs(uri)
        files.write_bytes(probe, b"")
        files.remove(probe)
    except Exception as e:  # noqa: BLE001
        reason = getattr(e, "strerror", None) or _reason(e)
        raise StorageError(f"{flag} {uri}: not writable ({reason})") from None
