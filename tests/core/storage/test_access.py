"""Flags' paths are checked before any work: a clear StorageError names the flag and path."""
import pytest

from core.storage.access import check_readable, check_writable
from core.storage.files import StorageError


def test_a_missing_input_is_named(tmp_path):
    with pytest.raises(StorageError, match=f"--data {tmp_path}/nope: no such file"):
        check_readable(str(tmp_path / "nope"), "--data")
    check_readable(str(tmp_path), "--data")


def test_an_output_folder_is_created_and_probed_and_nothing_is_left(tmp_path):
    check_writable(str(tmp_path / "new" / "out"), "--output")
    assert list((tmp_path / "new" / "out").iterdir()) == []


def test_an_unwritable_output_is_named(tmp_path):
    (tmp_path / "file").write_text("x")  # a file where a folder must go: even root fails
    with pytest.raises(StorageError, match="--output .*/file/out: not writable"):
        check_writable(str(tmp_path / "file" / "out"), "--output")


def test_a_remote_output_is_probed_through_the_same_layer():
    check_writable("ram://access-test/out", "--output")
