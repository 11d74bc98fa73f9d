"""list_class_folders: which files are images of which class."""
import pytest

from components.image_example_gen.readers.folder_tree import DatasetError, list_class_folders


def test_sorted_class_names_give_dense_label_ids(tmp_path, make_image):
    for name in ("zebra", "ant", "émeu"):
        make_image(tmp_path / name / "a.png")
    listing = list_class_folders(str(tmp_path))
    assert listing.classes == ["ant", "zebra", "émeu"]
    assert {f.relpath: f.label for f in listing.files} == {
        "ant/a.png": 0, "zebra/a.png": 1, "émeu/a.png": 2}


def test_extensions_match_in_any_case(tmp_path, make_image):
    for name in ("a.JPG", "b.jpeg", "c.Png", "d.bmp", "e.GIF"):
        make_image(tmp_path / "c" / name, fmt={"a": "JPEG", "b": "JPEG", "c": "PNG",
                                              "d": "BMP", "e": "GIF"}[name[0]])
    assert len(list_class_folders(str(tmp_path)).files) == 5


def test_hidden_and_non_image_files_are_ignored_and_counted(tmp_path, make_image):
    make_image(tmp_path / "cat" / "1.png")
    (tmp_path / "cat" / ".DS_Store").write_bytes(b"x")
    (tmp_path / "cat" / "notes.txt").write_text("hi")
    (tmp_path / "README").write_text("top-level file")
    (tmp_path / ".hidden_class").mkdir()
    listing = list_class_folders(str(tmp_path))
    assert [f.relpath for f in listing.files] == ["cat/1.png"]
    assert listing.ignored == 4


def test_folder_without_images_is_not_a_class(tmp_path, make_image):
    make_image(tmp_path / "dog" / "1.png")
    (tmp_path / "empty").mkdir()
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("x")
    listing = list_class_folders(str(tmp_path))
    assert listing.classes == ["dog"]
    assert listing.empty_classes == ["empty", "texts"]


@pytest.mark.parametrize("setup, message", [
    (lambda root: None, "no such file"),
    (lambda root: root.mkdir(), "found no images"),
    (lambda root: root.write_text("x"), "not a directory"),
])
def test_unusable_roots_raise_a_clear_error(tmp_path, setup, message):
    root = tmp_path / "data"
    setup(root)
    with pytest.raises(DatasetError, match=message) as error:
        list_class_folders(str(root))
    assert str(root) in str(error.value)


def test_split_folders_fix_the_splits_and_share_one_label_map(tmp_path, make_image):
    make_image(tmp_path / "train" / "cat" / "1.png")
    make_image(tmp_path / "train" / "dog" / "1.png")
    make_image(tmp_path / "val" / "dog" / "2.png")
    make_image(tmp_path / "val" / "emu" / "3.png")  # a class seen only in eval
    make_image(tmp_path / "test" / "cat" / "9.png")  # val wins over test
    listing = list_class_folders(str(tmp_path))
    assert listing.classes == ["cat", "dog", "emu"]
    assert {(f.relpath, f.label, f.split) for f in listing.files} == {
        ("train/cat/1.png", 0, "train"), ("train/dog/1.png", 1, "train"),
        ("val/dog/2.png", 1, "eval"), ("val/emu/3.png", 2, "eval")}
    assert listing.unused == ["test"]


def test_a_class_named_train_without_eval_folder_is_just_a_class(tmp_path, make_image):
    make_image(tmp_path / "train" / "a.png")
    make_image(tmp_path / "other" / "b.png")
    listing = list_class_folders(str(tmp_path))
    assert listing.classes == ["other", "train"]
    assert all(f.split is None for f in listing.files)
