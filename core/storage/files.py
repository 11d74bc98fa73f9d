"""One file API for every path a user gives: local paths, and object stores such as gs://.

Callers ask it, and nothing else, which a path is (`is_remote`, from uri.py).
Local paths go through `os` and `open`: no TensorFlow import, and listing
keeps os.scandir's speed. A path with a scheme goes through the clients in
remote.py (tf.io.gfile; google-cloud-storage for gs:// reads); a recursive
listing with sizes and times goes through Beam's FileSystems, whose one
paginated list call returns what gfile would need a stat per object for.

Object stores have no folders: tools that fake them write zero-byte
"directory marker" objects (`dir/`), which listings here leave out.
"""
import contextlib
import dataclasses
import fnmatch
import io
import os
import shutil
import uuid
from typing import IO, Iterator, List, Optional, Tuple

from core.storage.remote import gcs_client, gfile as _gfile, read_gcs, retrying
# What a path names is uri.py's to say; callers ask here (files.is_remote).
from core.storage.uri import absolute, bucket_of, has_buckets  # noqa: F401
from core.storage.uri import has_wildcards, is_remote, scheme

# File systems whose tf.io.gfile.listdir marks folders with a trailing slash (and a
# zero-byte "dir" marker object then is a file beside the folder "dir/").
SLASHED_SCHEMES = ("gs",)


class StorageError(OSError):
    """A path that cannot be used: no such bucket, access refused; the message names it."""


@dataclasses.dataclass(frozen=True)
class FileInfo:
    """One file found by `walk_files` or `stat`: its path, size and modification time."""

    path: str
    size: int
    mtime_ns: int


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
    if scheme(path) not in SLASHED_SCHEMES:  # no trailing slash tells folders apart
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


def walk(root: str) -> Iterator[Tuple[str, List[str], List[str]]]:
    """(folder, sub-folder names, file names) of `root` and every folder under it, as
    os.walk, top down: names removed from the sub-folder list are not visited.

    A missing `root` yields nothing. Local folder links are followed, as
    tf.io.gfile.walk followed them; on an object store markers are left out.
    """
    if not is_remote(root):
        yield from os.walk(root, followlinks=True)
        return
    import tensorflow as tf  # remote only, as in remote.py
    try:
        dirs, names = list_dir(root)
    except tf.errors.NotFoundError:
        return
    yield root, dirs, names
    for name in dirs:
        yield from walk(os.path.join(root, name))


def walk_files(root: str) -> List[FileInfo]:
    """Every file under `root` (recursively), with size and mtime, sorted by path."""
    if not is_remote(root):
        found = []
        for folder, _, names in os.walk(root):
            found += [stat(os.path.join(folder, name)) for name in names]
        return sorted(found, key=lambda f: f.path)
    from apache_beam.io.filesystems import FileSystems
    pattern = root.rstrip("/") + "/**"
    matched = retrying(lambda: FileSystems.match([pattern])[0].metadata_list, f"list {root}")
    return sorted((FileInfo(m.path, m.size_in_bytes, int(m.last_updated_in_seconds * 1e9))
                   for m in matched if not m.path.endswith("/")), key=lambda f: f.path)


def glob(pattern: str) -> List[str]:
    """The paths that match `pattern` (`*`, `?`, `[...]` within one path part), sorted.

    As tf.io.gfile.glob, which matches the remote ones, wildcards also match
    names that start with a dot (glob.glob's skip those).
    """
    if is_remote(pattern):
        return sorted(retrying(lambda: _gfile().glob(pattern), f"glob {pattern}"))
    if not has_wildcards(pattern):
        return [pattern] if os.path.lexists(pattern) else []
    folder, name = os.path.split(pattern)
    found = []
    for parent in glob(folder) if has_wildcards(folder) else [folder]:
        try:
            names = os.listdir(parent or os.curdir)
        except OSError:  # not a folder, or unreadable: no match, as in glob.glob
            continue
        found += [os.path.join(parent, n) for n in fnmatch.filter(names, name)]
    return sorted(found)


def stat(path: str) -> FileInfo:
    """The file's size and modification time, in nanoseconds.

    Locally through os.stat: TF's local stat truncates the time to whole
    seconds, and a move between folders (`mv` keeps the time) must still show.
    """
    if not is_remote(path):
        found = os.stat(path)
        return FileInfo(path, found.st_size, found.st_mtime_ns)
    found = retrying(lambda: _gfile().stat(path), f"stat {path}")
    return FileInfo(path, found.length, found.mtime_nsec)


def size(path: str) -> int:
    """The file's size in bytes."""
    return stat(path).size


def open_file(path: str, mode: str = "rb") -> IO:
    """A file object to read or write: `open` locally, tf.io.gfile.GFile otherwise (text
    modes are UTF-8). Writing one does not create its folder: see `makedirs`."""
    if not is_remote(path):
        return open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
    return _gfile().GFile(path, mode)


class _IoReadable(io.RawIOBase):
    """A remote file (tf.io.gfile's GFile) as the io module's file objects are: GFile seeks
    and reads but has no `closed`, which libraries such as pyarrow check first."""

    def __init__(self, file):
        super().__init__()
        self._file = file

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self._file.seek(offset, whence)
        return self._file.tell()

    def tell(self) -> int:
        return self._file.tell()

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)


@contextlib.contextmanager
def open_readable(path: str) -> Iterator[IO]:
    """A seekable binary file to read, with the io module's interface on every file system
    (ranged reads on a bucket: nothing is downloaded whole)."""
    with open_file(path, "rb") as f:
        yield f if hasattr(f, "closed") else _IoReadable(f)


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
    client = gcs_client() if scheme(path) == "gs" else None
    if client is None:
        return retrying(read, f"read {path}")
    return read_gcs(client, path, size)


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
    makedirs(os.path.dirname(path))
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


def create_exclusive(path: str, data: bytes) -> bool:
    """Creates `path` holding `data` unless something is there already; True if this call
    created it. Of several writers racing for one path, exactly one gets True, and
    every reader sees the whole content or nothing.

    Locally: a temporary sibling, hard-linked to `path` (link() refuses an
    existing name, atomically, on every POSIX file system, NFS included). On
    gs://: an upload with ifGenerationMatch=0, which the service refuses (412)
    once any generation of the object exists. A retried upload whose first
    try did land answers False, so callers that must know who won compare
    the content with their own. Other object stores offer no such
    precondition: there it is a check, then a write (not atomic).
    """
    if is_remote(path):
        return _create_remote(path, data)
    makedirs(os.path.dirname(path))
    temp = f"{path}.tmp-{uuid.uuid4().hex}"  # unique across threads too
    try:
        with open(temp, "wb") as f:
            f.write(data)
        os.link(temp, path)
        return True
    except FileExistsError:
        return False
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def _create_remote(path: str, data: bytes) -> bool:
    client = gcs_client() if scheme(path) == "gs" else None
    if client is None:
        if exists(path):
            return False
        write_bytes(path, data)
        return True
    from google.api_core import exceptions
    bucket, name = path.split("://", 1)[1].split("/", 1)
    blob = client.bucket(bucket).blob(name)
    try:
        retrying(lambda: blob.upload_from_string(data, if_generation_match=0),
                 f"create {path}")
        return True
    except exceptions.PreconditionFailed:
        return False


def copy(source: str, target: str) -> None:
    """Copies one file onto `target` (replaced if there), between any two file systems;
    within one object store a server-side copy. The target's folder must exist."""
    if not is_remote(source) and not is_remote(target):
        shutil.copyfile(source, target)
        return
    retrying(lambda: _gfile().copy(source, target, overwrite=True), f"copy {source}")


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
