"""read_window: choosing a reader by --format or by sniffing, the window's files, --since."""
import json
import os
import time

import pytest

from core.errors import UsageError
from monitor.readers.registry import (detect_format, format_names, parse_duration,
                                      read_window)
from monitor.records import Record


@pytest.mark.parametrize("text, seconds", [("24h", 86400), ("90m", 5400), ("7d", 604800),
                                           ("30s", 30), ("1.5h", 5400), ("2w", 1209600)])
def test_durations_parse_to_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "24", "h", "-1h", "0h", "1y", "1 day"])
def test_a_bad_duration_is_a_usage_error_naming_the_flag(text):
    with pytest.raises(UsageError, match=f"--since {text}: not a duration"):
        parse_duration(text)


def test_every_format_is_registered_in_sniffing_order():
    assert format_names() == ("images", "prediction_log", "kserve", "vertex", "rest",
                              "imagepipe")


def test_an_unknown_format_or_a_missing_window_names_the_flag(tmp_path):
    with pytest.raises(UsageError, match="--format csv: unknown; one of images, "):
        read_window(str(tmp_path), fmt="csv")
    with pytest.raises(UsageError, match=f"--data {tmp_path / 'nothing'}: no such file"):
        read_window(str(tmp_path / "nothing"))


def test_a_window_no_reader_knows_names_data_and_format(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "rows.jsonl").write_text(json.dumps({"x": 1}) + "\n")
    with pytest.raises(UsageError, match=f"--data {tmp_path}: its first 2 file.*--format"):
        read_window(str(tmp_path))


def test_an_empty_folder_yields_nothing(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden.png").write_bytes(b"x")
    assert detect_format(str(tmp_path)) is None
    assert list(read_window(str(tmp_path))) == []


def test_a_folder_is_walked_in_order_and_its_other_files_are_left_alone(tmp_path, make_image):
    for name in ("b/2.png", "a.jpg", ".cache/3.png"):
        make_image(tmp_path / name)
    (tmp_path / "b" / "notes.txt").write_text("not an image")
    assert detect_format(str(tmp_path)) == "images"
    items = list(read_window(str(tmp_path)))
    assert [i.id for i in items] == [str(tmp_path / "a.jpg"), str(tmp_path / "b" / "2.png")]
    assert all(isinstance(i, Record) and i.image[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0")
               for i in items)


def test_since_keeps_the_files_modified_within_it(tmp_path, make_image):
    old, new = make_image(tmp_path / "old.png"), make_image(tmp_path / "new.png")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    for data in (str(tmp_path), str(tmp_path / "*.png")):
        assert [i.id for i in read_window(data, since_s=parse_duration("24h"))] == [str(new)]
    assert [i.id for i in read_window(str(old), since_s=86400.0)] == []
    assert len(list(read_window(str(tmp_path), since_s=3 * 86400.0))) == 2


def test_a_file_given_directly_is_read_whatever_its_name(tmp_path):
    path = tmp_path / "traffic.log"
    path.write_text(json.dumps({"request": {"instances": [{"b64": "aGk="}]}}) + "\n")
    assert detect_format(str(path)) == "rest"
    assert [(i.id, i.image) for i in read_window(str(path))] == [(f"{path}:1", b"hi")]
