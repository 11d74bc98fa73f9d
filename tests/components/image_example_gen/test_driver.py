"""tree_fingerprint: changes whenever the data does, including moves that keep mtimes."""
import os
import shutil

from components.image_example_gen.driver import tree_fingerprint


def _tree(tmp_path, make_image):
    for name in ("cat/1.png", "cat/2.png", "dog/3.png"):
        make_image(tmp_path / name, seed=len(name))
    return str(tmp_path)


def test_unchanged_tree_has_a_stable_fingerprint(tmp_path, make_image):
    root = _tree(tmp_path, make_image)
    assert tree_fingerprint(root) == tree_fingerprint(root)


def test_moving_a_file_between_classes_changes_it(tmp_path, make_image):
    root = _tree(tmp_path, make_image)
    before = tree_fingerprint(root)
    shutil.move(os.path.join(root, "cat/2.png"), os.path.join(root, "dog/2.png"))  # keeps mtime
    assert tree_fingerprint(root) != before


def test_rewriting_one_file_changes_it(tmp_path, make_image):
    root = _tree(tmp_path, make_image)
    before = tree_fingerprint(root)
    path = os.path.join(root, "dog/3.png")
    stat = os.stat(path)
    make_image(tmp_path / "dog/3.png", seed=99)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert tree_fingerprint(root) != before


def test_a_single_file_dataset_is_fingerprinted_too(tmp_path):
    path = tmp_path / "data.npz"
    path.write_bytes(b"x")
    assert tree_fingerprint(str(path)).startswith("files:1,")
