"""Copy a model folder between file systems, skipping object stores' directory markers.

Object stores have no folders. Tools that fake them write zero-byte marker
objects: `dir/`, or an object named exactly like the folder. Listed through
tf.io.gfile, such a marker is a file beside the folder of the same name:
copied to a real file system the file is made first and the folder then
cannot be ("not a directory", as in kubeflow/pipelines#13476, where KFP's
launcher downloads TFX SavedModels), and copied between buckets it carries
the marker into the next step's artifact. Every SavedModel copy between
steps (the Pusher's, the baseline step's, the pushed version's) goes through
`copy_tree`, which copies files only, never a marker.
"""
import os
import shutil
from typing import List, Optional

from core.storage.remote import gfile as _gfile


def _is_marker(fs, path: str, rel: str, folders: set) -> bool:
    """A zero-byte object named like a folder: `rel/`, or `rel` where `rel/` has files."""
    named_like_a_folder = rel.endswith("/") or rel in folders
    return named_like_a_folder and fs.stat(path).length == 0


def tree_files(src: str, fs=None) -> List[str]:
    """The relative paths of the files under `src`, markers left out, sorted."""
    fs = fs or _gfile()
    files, folders = [], set()
    for root, subdirs, names in fs.walk(src):
        rel_root = os.path.relpath(root.rstrip("/"), src.rstrip("/"))
        prefix = "" if rel_root == "." else rel_root + "/"
        folders.update(prefix + d.rstrip("/") for d in subdirs)
        files += [(os.path.join(root, n), prefix + n) for n in names]
    return sorted(rel for path, rel in files if not _is_marker(fs, path, rel, folders))


def copy_tree(src: str, dst: str, fs=None, last: Optional[str] = None) -> List[str]:
    """Copies the files under `src` into `dst`, overwriting files of the same name.

    `fs` is the source's file system (tf.io.gfile unless a stand-in is given);
    `dst` is always written through tf.io.gfile. `last`, a relative path, is
    copied after every other file. Returns the relative paths copied.
    """
    fs, gfile = fs or _gfile(), _gfile()
    files = sorted(tree_files(src, fs), key=lambda rel: rel == last)  # stable
    gfile.makedirs(dst)
    for rel in files:
        target = os.path.join(dst, rel)
        gfile.makedirs(os.path.dirname(target))
        if fs is gfile:  # within TF's file systems: a server-side copy on GCS
            gfile.copy(os.path.join(src, rel), target, overwrite=True)
            continue
        with fs.GFile(os.path.join(src, rel), "rb") as reader, \
                gfile.GFile(target, "wb") as writer:
            writer.write(b"")  # GFile creates its file on the first write; empty files too
            shutil.copyfileobj(reader, writer)
    return files
