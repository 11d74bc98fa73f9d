"""Shared JSON records that several runs change at once: a conditional read-modify-write.

A record such as judged.json or served.json holds one entry per model or
per class, and any run may add to it while another does. A plain read, then
a whole write, loses the entry of whoever wrote in between. `update_json`
makes each change conditional on the record being unchanged since it was
read, and on a conflict reads again and re-applies the change, so every
writer's change lands:

- locally: an exclusive flock on a lock file beside the record
  (`<record>.lock`, kept: removing it would let two writers lock two files),
  held from the read to the atomic rename of the new record;
- on gs://: the upload carries `ifGenerationMatch` (the generation read, 0
  for a record that did not exist), which Cloud Storage refuses with 412
  once anyone else wrote. google-cloud-storage retries a conditional upload
  on transient errors; one whose first try landed answers 412 too, and is
  then re-applied, so a change must be idempotent (set an entry, add what is
  missing), as every caller's is;
- other object stores offer no precondition: a read, then a write.
"""
import contextlib
import json
import logging
import os
import random
import time
from typing import Any, Callable, Iterator, Optional

from core.storage import files
from core.storage.remote import gcs_client

# Attempts on a conflict, and the longest pause between them (jittered, so that two
# writers that collided do not collide again).
TRIES = 30
MAX_PAUSE_S = 0.5
LOCK_SUFFIX = ".lock"


class RecordConflict(OSError):
    """Other writers kept changing the record for all TRIES attempts."""


def update_json(path: str, change: Callable[[Any], Any], default: Any = None,
                replace_unreadable: bool = False) -> Any:
    """Applies `change` (old value -> new value; `default` where there is no record) to the
    JSON record at `path`, conditionally (module docstring); returns the value written.

    `change` may run more than once, on fresher values: it must not have side effects.
    An unchanged value is not written. A record that is not JSON raises StorageError,
    naming it, unless `replace_unreadable` (a record that only saves work) makes it
    `default`.
    """
    fallback = default if replace_unreadable else _RAISE
    if not files.is_remote(path):
        with _flock(path):
            return _apply(path, change, _read_local(path, default, fallback))
    client = gcs_client() if files.scheme(path) == "gs" else None
    if client is None:
        return _apply(path, change, read_json(path, default, replace_unreadable))
    return _update_gcs(client, path, change, default, fallback)


_RAISE = object()  # _parse's fallback that raises


def read_json(path: str, default: Any = None, replace_unreadable: bool = False) -> Any:
    """The record's value, or `default` where there is none (or, with
    `replace_unreadable`, where it is not JSON)."""
    if not files.exists(path):
        return default
    return _parse(path, files.read_bytes(path), default if replace_unreadable else _RAISE)


def _parse(path: str, data: bytes, fallback: Any) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as e:  # a guess would overwrite whatever the record held
        if fallback is not _RAISE:
            logging.warning("%s is not JSON (%s): replaced", path, e)
            return fallback
        raise files.StorageError(f"{path} is not JSON ({e}): fix it or remove it") from None


def _apply(path: str, change: Callable[[Any], Any], old: Any) -> Any:
    new = change(_copy(old))
    if new != old:
        files.write_text(path, _text(new))
    return new


def _copy(value: Any) -> Any:
    """A deep copy, so that a `change` that edits its argument in place still compares."""
    return json.loads(json.dumps(value))


def _text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _read_local(path: str, default: Any, fallback: Any) -> Any:
    try:
        with open(path, "rb") as f:
            return _parse(path, f.read(), fallback)
    except FileNotFoundError:
        return default


@contextlib.contextmanager
def _flock(path: str) -> Iterator[None]:
    """An exclusive flock on `<path>.lock`, waited for: writers hold it for milliseconds."""
    import fcntl
    files.makedirs(os.path.dirname(path))
    with open(path + LOCK_SUFFIX, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _update_gcs(client, path: str, change: Callable[[Any], Any], default: Any,
                fallback: Any) -> Any:
    """The read, change and conditional upload, again on each 412 (module docstring)."""
    from google.api_core import exceptions
    bucket, name = path.split("://", 1)[1].split("/", 1)
    for attempt in range(TRIES):
        generation, old = _read_gcs(client.bucket(bucket), name, path, default, fallback)
        new = change(_copy(old))
        if new == old:
            return new
        try:
            client.bucket(bucket).blob(name).upload_from_string(
                _text(new).encode("utf-8"), content_type="application/json",
                if_generation_match=generation)
            return new
        except exceptions.PreconditionFailed:
            logging.info("%s changed while it was updated (attempt %d); reading it again",
                         path, attempt + 1)
            time.sleep(random.uniform(0, MAX_PAUSE_S))
    raise RecordConflict(f"{path}: other writers changed it {TRIES} times in a row; "
                         "nothing was written")


def _read_gcs(bucket, name: str, path: str, default: Any, fallback: Any) -> tuple:
    """(the object's generation, 0 if none; its value, or `default`), read as one version:
    the download is conditional on the generation the metadata named."""
    from google.api_core import exceptions
    for _ in range(TRIES):
        blob = bucket.get_blob(name)
        if blob is None:
            return 0, default
        try:
            data = blob.download_as_bytes(if_generation_match=blob.generation)
        except (exceptions.PreconditionFailed, exceptions.NotFound):
            continue  # replaced or removed between the two requests
        return blob.generation, _parse(path, data, fallback)
    raise RecordConflict(f"{path}: it changed on every read; nothing was written")


def replaced_entry(key: str, value: Optional[dict]) -> Callable[[dict], dict]:
    """A `change` that sets (or, with None, removes) one entry of a {key: entry} record."""
    def change(record: dict) -> dict:
        record = dict(record or {})
        if value is None:
            record.pop(key, None)
        else:
            record[key] = value
        return record
    return change
