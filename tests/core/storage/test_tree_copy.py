"""Model copies between steps skip object stores' zero-byte directory markers.

`MarkerStore` stands in for a bucket listed object by object, as KFP's
launcher lists an artifact before downloading it (kubeflow/pipelines#13476):
flat keys, folders implied by '/', and the zero-byte markers that folder-faking
tools leave: `model/variables/`, or `model/variables` beside its files.
"""
import io
import os
import shutil

import pytest

from core.storage.tree_copy import copy_tree, tree_files

MODEL = {"m/saved_model.pb": b"graph", "m/variables/variables.index": b"index",
         "m/variables/variables.data-00000-of-00001": b"weights",
         "m/assets.extra/imagepipe_push.json": b"{}", "m/fingerprint.pb": b""}
MARKERS = {"m/": b"", "m/variables/": b"", "m/variables": b"", "m/assets.extra/": b""}


class MarkerStore:
    """The slice of tf.io.gfile that copy_tree reads, over a dict of object keys."""

    class _Stat:
        def __init__(self, length):
            self.length = length

    def __init__(self, objects: dict):
        self.objects = objects

    def walk(self, top: str):
        """Every object under `top` is a file of its folder; markers included."""
        top = top.rstrip("/")
        by_folder = {}
        for key in self.objects:
            if key.startswith(top + "/") and key != top + "/":
                folder, _, name = key[len(top) + 1:].rstrip("/").rpartition("/")
                by_folder.setdefault(folder, []).append(name + ("/" if key.endswith("/") else ""))
        for folder, names in sorted(by_folder.items()):
            subdirs = sorted({f[len(folder):].lstrip("/").split("/")[0] for f in by_folder
                              if f.startswith(folder) and f != folder and
                              (not folder or f[len(folder)] == "/")})
            yield os.path.join(top, folder) if folder else top, subdirs, names

    def stat(self, path: str):
        return self._Stat(len(self.objects[path]))

    def GFile(self, path: str, mode: str):  # noqa: N802 (tf.io.gfile's name)
        return io.BytesIO(self.objects[path])


def test_markers_are_not_files_of_the_model():
    store = MarkerStore({**MODEL, **MARKERS})
    assert tree_files("m", store) == sorted(key[2:] for key in MODEL)


def test_a_model_with_markers_copies_to_a_real_file_system(tmp_path):
    copied = copy_tree("m", str(tmp_path / "model"), fs=MarkerStore({**MODEL, **MARKERS}))
    assert len(copied) == len(MODEL)
    for key, data in MODEL.items():
        assert (tmp_path / "model" / key[2:]).read_bytes() == data
    assert (tmp_path / "model" / "variables").is_dir()


def test_copying_the_markers_as_files_fails_as_in_kfp_13476(tmp_path):
    """What copy_tree avoids: the marker becomes a file where the folder must go."""
    store = MarkerStore({**MODEL, **MARKERS})
    with pytest.raises((NotADirectoryError, FileExistsError)):
        for key in sorted(store.objects, key=len):
            target = tmp_path / "naive" / key[2:]
            if key.endswith("/"):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as f:
                shutil.copyfileobj(store.GFile(key, "rb"), f)


def test_the_commit_file_is_copied_last_within_tfs_file_systems(tmp_path):
    import tensorflow as tf
    src = tmp_path / "src"
    for key, data in MODEL.items():
        (src / key[2:]).parent.mkdir(parents=True, exist_ok=True)
        (src / key[2:]).write_bytes(data)
    copied = copy_tree(str(src), "ram://tree-copy-test/m", last="saved_model.pb")
    assert copied[-1] == "saved_model.pb" and len(copied) == len(MODEL)
    with tf.io.gfile.GFile("ram://tree-copy-test/m/variables/variables.index", "rb") as f:
        assert f.read() == b"index"
