"""Where a manifest's rows point: each image's location, the allowed roots, which exist.

A manifest (import_files.py, csv_manifest.py) names images relative to
its own folder, by absolute path, as `file://` URIs or on gs://. Every location is
normalized (`..` and `.` resolved) before the allowed-root check, and a local one is
checked with its symlinks resolved, so no spelling reaches outside the roots.
`image_path` is the one join of a dataset root and an ImageFile's relpath, for every
reader of image files (encoding, the plan's probe).
"""
import functools
import os
import posixpath
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Iterable, List, Optional

from components.image_example_gen.readers.folder_tree import IMAGE_EXTENSIONS
from core.storage import files

FILE_SCHEME = "file://"
# Remote folders listed at once when checking which images exist.
LISTERS = 16


@functools.lru_cache(maxsize=64)
def _files_base(root: str) -> str:
    """The folder relpaths are relative to: `root`, or the folder of a manifest file."""
    return parent(root) if files.isfile(root) else root


def image_path(root: str, relpath: str) -> str:
    """The file an ImageFile names: its relpath under `root` (a folder, or the folder of a
    manifest file), or the relpath itself when it is absolute or a URI."""
    if files.is_remote(relpath) or os.path.isabs(relpath):
        return relpath
    return os.path.join(_files_base(root), relpath)


def parent(path: str) -> str:
    """The folder holding `path`: absolute locally, the URI's parent on a store."""
    if files.is_remote(path):
        return posixpath.dirname(path.rstrip("/"))
    return os.path.dirname(os.path.abspath(path))


def _normal_uri(uri: str) -> str:
    """`gs://b/a/../c` -> `gs://b/c`: `..` never climbs out of the bucket."""
    bucket = files.bucket_of(uri) or uri.split("://", 1)[0] + "://"
    rest = posixpath.normpath("/" + uri[len(bucket):].lstrip("/"))
    return bucket + ("" if rest == "/" else rest)


def location(folder: str, image: str) -> str:
    """The normalized absolute path or URI of `image`, as a row in a manifest in `folder`
    wrote it (relative to `folder`, absolute, `file://...` or a URI)."""
    if image.startswith(FILE_SCHEME):
        image = image[len(FILE_SCHEME):]
        if not image.startswith("/"):  # file://host/path: only this machine's files
            image = image[image.find("/"):] if "/" in image else "/"
    if files.is_remote(image):
        return _normal_uri(image)
    if os.path.isabs(image):
        return os.path.normpath(image)
    if files.is_remote(folder):
        return _normal_uri(folder.rstrip("/") + "/" + image)
    return os.path.normpath(os.path.join(folder, image))


def _root(path: str) -> str:
    path = path.strip()
    if path.startswith(FILE_SCHEME):
        path = location("/", path)
    if files.is_remote(path):
        return _normal_uri(path).rstrip("/")
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def allowed_roots(data: str, extra: Optional[str]) -> List[str]:
    """The roots the images a dataset names must be under: the folder of `data` (a
    manifest or other data file) or `data` itself (a dataset folder), symlinks resolved,
    or its bucket (gs://); and each of `extra`'s comma-separated roots."""
    if files.has_buckets(data):
        own = files.bucket_of(data)
    else:
        own = _root(data if os.path.isdir(data) else parent(data))
    return [own, *(_root(r) for r in (extra or "").split(",") if r.strip())]


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or inside it (whole path parts only)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


class RootCheck:
    """Whether locations are under the allowed roots; local ones with symlinks resolved.

    A folder's real path is resolved once (cached); each file costs one lstat, and a
    realpath only when the file itself is a link.
    """

    def __init__(self, roots: List[str]):
        self.roots = roots
        self._prefixes = tuple(root.rstrip("/") + "/" for root in roots)
        self._real_dirs: Dict[str, str] = {}

    def allowed(self, path: str) -> bool:
        """Whether `path` (a `location`) is under one of the roots."""
        if not files.is_remote(path):
            path = self._real(path)
        return path.startswith(self._prefixes) or path in self.roots

    def _real(self, path: str) -> str:
        folder, name = os.path.split(path)
        if folder not in self._real_dirs:
            self._real_dirs[folder] = os.path.realpath(folder)
        real = os.path.join(self._real_dirs[folder], name)
        return os.path.realpath(real) if os.path.islink(real) else real


class FolderNames:
    """The file names of folders, each listed once: to find the image a row names by its
    name without an extension (Kaggle's `id` columns), one listing a folder, not a stat
    per extension."""

    def __init__(self):
        self._names: Dict[str, set] = {}

    def with_extension(self, path: str) -> List[str]:
        """The files `path` may name: itself if it is a file, else each `<path>.<ext>`
        there, ext an image extension in any case."""
        folder, base = (posixpath if files.is_remote(path) else os.path).split(path)
        if folder not in self._names:
            self._names[folder] = (set(files.list_dir(folder)[1]) if files.isdir(folder)
                                   else set())
        names = self._names[folder]
        if base in names:
            return [path]
        return [path + name[len(base):] for name in sorted(names)
                if name.startswith(base) and name[len(base):].lower() in IMAGE_EXTENSIONS]


def relpath_of(path: str, folder: str) -> str:
    """An image's name in the examples: relative to the manifest's folder when under it,
    else its absolute path or URI."""
    if under(path, folder) and path != folder:
        return path[len(folder.rstrip("/")) + 1:]
    return path


def _remote_names(folder: str) -> set:
    """File names directly in a remote folder; none if it does not exist."""
    return set(files.list_dir(folder)[1]) if files.isdir(folder) else set()


def missing_images(paths: Iterable[str]) -> set:
    """Those of `paths` that are not files. Locally a stat each; on a store, one listing
    of each distinct folder (never a request per image), several folders at once."""
    remote, gone = [], set()
    for path in paths:
        if files.is_remote(path):
            remote.append(path)
        elif not os.path.isfile(path):
            gone.add(path)
    folders = sorted({posixpath.dirname(p) for p in remote})
    if folders:
        with ThreadPoolExecutor(max_workers=min(LISTERS, len(folders))) as pool:
            names = dict(zip(folders, pool.map(_remote_names, folders)))
        gone |= {p for p in remote if posixpath.basename(p) not in names[posixpath.dirname(p)]}
    return gone


def image_infos(paths: Iterable[str]) -> List[files.FileInfo]:
    """Size and mtime of each of `paths` that exists, for a cache fingerprint: a stat
    each locally, one listing of each distinct folder on a store."""
    paths = list(paths)
    found = [files.stat(p) for p in paths if not files.is_remote(p) and os.path.isfile(p)]
    folders = sorted({posixpath.dirname(p) for p in paths if files.is_remote(p)})
    if folders:
        with ThreadPoolExecutor(max_workers=min(LISTERS, len(folders))) as pool:
            listed = {info.path: info for infos in pool.map(files.walk_files, folders)
                      for info in infos}
        found += [listed[p] for p in paths if p in listed]
    return found
