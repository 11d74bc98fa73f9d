"""shared_json: a conditional read-modify-write of one JSON record (locally; the bucket's
precondition is tested with real writers in tests/components/image_pusher/)."""
import json

import pytest

from core.storage import files, shared_json


def test_a_change_applies_to_the_default_then_to_what_is_there(tmp_path):
    path = str(tmp_path / "r" / "record.json")
    assert shared_json.update_json(path, shared_json.replaced_entry("a", {"v": 1}), {}) == {
        "a": {"v": 1}}
    shared_json.update_json(path, shared_json.replaced_entry("b", {"v": 2}), {})
    assert json.loads(open(path).read()) == {"a": {"v": 1}, "b": {"v": 2}}
    shared_json.update_json(path, shared_json.replaced_entry("a", None), {})
    assert shared_json.read_json(path) == {"b": {"v": 2}}


def test_an_unchanged_value_is_not_written(tmp_path):
    path = tmp_path / "record.json"
    path.write_text('{"a": 1}')
    before = path.stat().st_mtime_ns
    assert shared_json.update_json(str(path), lambda record: record, {}) == {"a": 1}
    assert path.stat().st_mtime_ns == before and path.read_text() == '{"a": 1}'


def test_a_change_that_edits_its_argument_in_place_is_still_written(tmp_path):
    path = str(tmp_path / "record.json")
    shared_json.update_json(path, lambda record: record.setdefault("a", 1) and record, {})
    assert shared_json.read_json(path) == {"a": 1}


def test_a_record_that_is_not_json_is_refused_naming_it_or_replaced_if_asked(tmp_path):
    path = tmp_path / "record.json"
    path.write_text("{not json")
    with pytest.raises(files.StorageError, match="record.json is not JSON"):
        shared_json.update_json(str(path), lambda record: {"a": 1}, {})
    assert path.read_text() == "{not json"  # nothing lost
    assert shared_json.read_json(str(path), {}, replace_unreadable=True) == {}
    shared_json.update_json(str(path), shared_json.replaced_entry("a", 1), {},
                            replace_unreadable=True)
    assert shared_json.read_json(str(path)) == {"a": 1}
