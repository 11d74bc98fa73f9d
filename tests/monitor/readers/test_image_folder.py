"""The `images` format (image_folder.py): a Record per image file; unreadable ones are bad."""
import os

from monitor.readers.registry import read_window
from monitor.records import BadRecord, Record


def test_an_unreadable_image_is_a_bad_record_and_the_others_are_read(tmp_path, make_image):
    good = make_image(tmp_path / "a.png")
    os.symlink(tmp_path / "gone.png", tmp_path / "b.png")  # a dangling link
    items = list(read_window(str(tmp_path), fmt="images"))
    assert [type(i) for i in items] == [Record, BadRecord]
    assert items[0].image == good.read_bytes() and items[0].probabilities is None
    assert items[1].id == str(tmp_path / "b.png") and "unreadable" in items[1].reason
