"""Versions only increase, and a failed push leaves no version folder behind."""
import os
import shutil

import pytest

from components import versions


def _model(tmp_path):
    model = tmp_path / "model"
    (model / "variables").mkdir(parents=True)
    (model / "saved_model.pb").write_bytes(b"graph")
    (model / "variables" / "variables.index").write_bytes(b"index")
    return model


def test_versions_increase_even_within_one_second(tmp_path, monkeypatch):
    monkeypatch.setattr(versions.time, "time", lambda: 1000.5)
    base = tmp_path / "serving" / "m"
    model = _model(tmp_path)
    pushed = [versions.publish(model, base, versions.next_version(base)) for _ in range(3)]
    assert [os.path.basename(p) for p in pushed] == ["1000", "1001", "1002"]
    assert versions.versions(base) == [1000, 1001, 1002]


def test_a_clock_behind_the_last_version_still_gives_a_higher_one(tmp_path, monkeypatch):
    base = tmp_path / "m"
    (base / "5000").mkdir(parents=True)
    (base / "notes").mkdir()
    monkeypatch.setattr(versions.time, "time", lambda: 10.0)
    assert versions.next_version(base) == 5001


def test_a_push_interrupted_mid_copy_leaves_no_partial_version(tmp_path, monkeypatch):
    base = tmp_path / "m"
    model = _model(tmp_path)
    real_copy = shutil.copy2
    copied = []

    def failing_copy(src, dst, **kwargs):
        if copied:
            raise OSError("disk full")
        copied.append(src)
        return real_copy(src, dst, **kwargs)

    real_copytree = shutil.copytree

    def copytree(src, dst, *args, **kwargs):  # also called for each subfolder
        return real_copytree(src, dst, copy_function=failing_copy)

    monkeypatch.setattr(shutil, "copytree", copytree)
    with pytest.raises(OSError, match="disk full"):
        versions.publish(model, base, 7)
    assert copied  # it failed mid-copy, after a file was written
    assert os.listdir(base) == []  # no version, no leftover partial folder


def test_an_existing_version_is_never_overwritten(tmp_path):
    base = tmp_path / "m"
    model = _model(tmp_path)
    versions.publish(model, base, 3)
    with pytest.raises(FileExistsError, match="never overwritten"):
        versions.publish(model, base, 3)


def test_object_stores_get_every_file_before_saved_model_pb(tmp_path, monkeypatch):
    import tensorflow as tf
    base = "ram://versions-test/serving/m"
    order = []
    real_copy = tf.io.gfile.copy
    monkeypatch.setattr(tf.io.gfile, "copy", lambda src, dst, *a, **k: (
        order.append(os.path.basename(dst)), real_copy(src, dst, *a, **k)))
    path = versions.publish(str(_model(tmp_path)), base, 8, source_uri="uri://model")
    assert order[-1] == "saved_model.pb" and "variables.index" in order
    assert versions.versions(base) == [8] and versions.next_version(base) > 8
    assert versions.provenance(path)["source_uri"] == "uri://model"
    with pytest.raises(FileExistsError):
        versions.publish(str(_model(tmp_path)), base, 8)


def test_an_object_store_push_that_fails_removes_its_files(tmp_path, monkeypatch):
    import tensorflow as tf
    base = "ram://versions-test-fail/serving/m"
    real_copy = tf.io.gfile.copy

    def failing(src, dst, *args, **kwargs):
        if dst.endswith("saved_model.pb"):
            raise OSError("quota exceeded")
        return real_copy(src, dst, *args, **kwargs)

    monkeypatch.setattr(tf.io.gfile, "copy", failing)
    with pytest.raises(OSError, match="quota"):
        versions.publish(str(_model(tmp_path)), base, 9)
    assert versions.versions(base) == []
