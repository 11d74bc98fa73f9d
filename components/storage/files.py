"""One file API for every path a user gives: local paths, and object stores such as gs://.

Local paths go through `os` and `open`: no TensorFlow import, and listing
keeps os.scandir's speed. A path with a scheme goes through tf.io.gfile,
TensorFlow's own client, which the TFX components use for the same URIs;
a recursive listing with sizes and times goes through Beam's FileSystems,
whose one paginated list call returns what gfile would need a stat per
object for. Both clients retry transient errors themselves; `retrying`
adds a few attempts with backoff on top, for the calls whose failure
would otherwise end a run (tf.io.gfile turns a transient error during its
folder check into NotFound).

Object stores have no folders: tools that fake them write zero-byte
"directory marker" objects (`dir/`), which listings here leave out.
"""
import dataclasses
import os
import time
from typing import Callable, IO, List, Optional, Tuple, TypeVar

T = TypeVar("T")
# Attempts, and the first delay (doubled each time), for a transient error.
RETRIES = 4
FIRST_DELAY_S = 0.5
# File systems whose tf.io.gfile.listdir marks folders with a trailing slash (and a
# zero-byte "dir" marker object then is a file beside the folder "dir/").
SLASHED_SCHEMES = ("gs://",)
# Pooled connections of the gs:// read client: at least the parallel readers
# (components/image_example_gen/readers/units.py REMOTE_READERS, read_heads).
CONNECTIONS = 32


class StorageError(OSError):
    """A path that cannot be used: no such bucket, access refused; the message names it."""


@dataclasses.dataclass(frozen=True)
class FileInfo:
    """One file found by `walk_files`: its full path, size and modification time."""

    path: str
    size: int
    mtime_ns: int


def is_remote(path: str) -> bool:
    """True for URIs with a scheme (gs://, s3://, ...); False for local paths."""
    return "://" in str(path)


def _gfile():
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


def exists(path: str) -> bool:
    """Whether a file or folder is at `path`."""
    if not is_remote(path):
        return os.path.exists(path)
    return retrying(lambda: _gfile().exists(path), f"exists {path}")


def isdir(path: str) -> bool:
    """Whether `path` is a folder (on an object store: a prefix with objects under it)."""
    if not is_remote(path):
        return os.path.isdir(path)
    return retrying(lambda: _gfile().isdir(path), f"isdir {path}")


def isfile(path: str) -> bool:
    """Whether `path` is a file (on an object store: an object that is not a marker)."""
    if not is_remote(path):
        return os.path.isfile(path)
    return exists(path) and not isdir(path)


def list_dir(path: str) -> Tuple[List[str], List[str]]:
    """(sub-folder names, file names) directly under `path`, each sorted.

    Entries that cannot be stat'ed locally (a symlink loop) count as files,
    so that ingestion reports them with the OS's reason instead of dropping
    them silently.
    """
    if not is_remote(path):
        dirs, files = [], []
        for entry in os.scandir(path):
            (dirs if _is_dir(entry) else files).append(entry.name)
        return sorted(dirs), sorted(files)
    names = retrying(lambda: _gfile().listdir(path), f"listdir {path}")
    dirs = {n.rstrip("/") for n in names if n.endswith("/")}
    plain = [n for n in names if n and not n.endswith("/") and n not in dirs]
    if not path.startswith(SLASHED_SCHEMES):  # no trailing slash tells folders apart
        dirs |= {n for n in plain if isdir(os.path.join(path, n))}
    return sorted(dirs), sorted(n for n in plain if n not in dirs)


def _is_dir(entry: os.DirEntry) -> bool:
    """False for symlink loops and unreadable entries (is_dir raises on ELOOP)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def listdir(path: str) -> List[str]:
    """Every name directly under `path` (folders without a trailing slash), sorted."""
    dirs, files = list_dir(path)
    return sorted(dirs + files)


def walk_files(root: str) -> List[FileInfo]:
    """Every file under `root` (recursively), with size and mtime, sorted by path."""
    if not is_remote(root):
        found = []
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                stat = os.stat(path)
                found.append(FileInfo(path, stat.st_size, stat.st_mtime_ns))
        return sorted(found, key=lambda f: f.path)
    from apache_beam.io.filesystems import FileSystems
    pattern = root.rstrip("/") + "/**"
    matched = retrying(lambda: FileSystems.match([pattern])[0].metadata_list, f"list {root}")
    return sorted((FileInfo(m.path, m.size_in_bytes, int(m.last_updated_in_seconds * 1e9))
                   for m in matched if not m.path.endswith("/")), key=lambda f: f.path)


def open_file(path: str, mode: str = "rb") -> IO:
    """A file object: `open` locally, tf.io.gfile.GFile otherwise (text modes are UTF-8)."""
    if not is_remote(path):
        return open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
    return _gfile().GFile(path, mode)


def read_bytes(path: str) -> bytes:
    """The whole file."""
    return _read(path, None)


def read_text(path: str) -> str:
    """The whole file, decoded as UTF-8."""
    return read_bytes(path).decode("utf-8")


def read_head(path: str, size: int) -> bytes:
    """The first `size` bytes (fewer if the file is shorter): a ranged read, never the
    whole object, so that planning a bucket of photos reads only their headers."""
    return _read(path, size)


def _read(path: str, size: Optional[int]) -> bytes:
    """Bytes of a file, all or the first `size`; gs:// objects through google-cloud-storage."""
    def read():
        with open_file(path, "rb") as f:
            return f.read() if size is None else f.read(size)
    if not is_remote(path):
        return read()
    client = gcs_client() if path.startswith("gs://") else None
    if client is None:
        return retrying(read, f"read {path}")
    bucket, name = path[len("gs://"):].split("/", 1)
    blob = client.bucket(bucket).blob(name)
    if size is None:  # the whole object, checked against its stored hash
        return retrying(blob.download_as_bytes, f"read {path}")
    # A range cannot be checked against the object's hash.
    return retrying(lambda: blob.download_as_bytes(start=0, end=max(0, size - 1),
                                                   checksum=None), f"read {path}")


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


def write_bytes(path: str, data: bytes) -> None:
    """Writes `path` so that a reader sees the old content or the new, never a part.

    Locally: a temporary sibling, then an atomic rename. On an object store an
    upload becomes visible only once complete (a single object is never
    half-written), so it is written directly.
    """
    if is_remote(path):
        def write():
            makedirs(os.path.dirname(path))
            with _gfile().GFile(path, "wb") as f:
                f.write(data)
        retrying(write, f"write {path}")
        return
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    temp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def write_text(path: str, text: str) -> None:
    """`write_bytes` of UTF-8 text."""
    write_bytes(path, text.encode("utf-8"))


def makedirs(path: str) -> None:
    """Creates a folder and its parents (a no-op on object stores with no marker)."""
    if not path:
        return
    if not is_remote(path):
        os.makedirs(path, exist_ok=True)
        return
    retrying(lambda: _gfile().makedirs(path), f"makedirs {path}")


def remove(path: str) -> None:
    """Deletes a file; a missing one is not an error."""
    if not is_remote(path):
        if os.path.lexists(path):
            os.remove(path)
        return
    if exists(path):
        retrying(lambda: _gfile().remove(path), f"remove {path}")


def rmtree(path: str) -> None:
    """Deletes a folder and everything under it; a missing one is not an error."""
    if not is_remote(path):
        import shutil
        shutil.rmtree(path, ignore_errors=True)
        return
    if isdir(path):
        retrying(lambda: _gfile().rmtree(path), f"rmtree {path}")


def rename(source: str, target: str) -> None:
    """Moves a file, replacing `target`; on an object store a copy, then a delete."""
    if not is_remote(source):
        os.replace(source, target)
        return
    retrying(lambda: _gfile().rename(source, target, overwrite=True), f"rename {source}")


def size(path: str) -> int:
    """The file's size in bytes."""
    if not is_remote(path):
        return os.path.getsize(path)
    return retrying(lambda: _gfile().stat(path).length, f"stat {path}")


def bucket_of(uri: str) -> Optional[str]:
    """`gs://bucket/...` -> `gs://bucket`; None for local paths."""
    if not is_remote(uri):
        return None
    scheme, rest = uri.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def read_heads(paths: List[str], size: int, workers: int = 16) -> List[Optional[bytes]]:
    """`read_head` of many files at once (None where one cannot be read).

    Threads, since each read waits on the network: a sample of photos in a
    bucket costs about one round trip, not one per photo.
    """
    from concurrent.futures import ThreadPoolExecutor

    def head(path: str) -> Optional[bytes]:
        try:
            return read_head(path, size)
        except Exception:  # noqa: BLE001  (unreadable files are ingestion's to report)
            return None
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(paths)))) as pool:
        return list(pool.map(head, paths))


def absolute(path: str) -> str:
    """A local path made absolute (and `~` expanded), so that TFX artifacts do not depend
    on the working directory; a URI unchanged."""
    return path if is_remote(path) else os.path.abspath(os.path.expanduser(path))
