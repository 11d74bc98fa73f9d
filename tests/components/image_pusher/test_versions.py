"""Versions only increase, a failed push leaves no version folder behind, and the
served record (pin, rolled-back versions, TFLite pointer) says which one is served."""
import os
import shutil
import time

import pytest

from components.image_pusher import versions
from core.storage.files import StorageError
from tests.support.models import stand_in_model


def _model(tmp_path):
    model = stand_in_model(tmp_path / "model", variables=True)
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


def test_provenance_holds_the_pushers_record_beside_version_source_and_time(tmp_path):
    path = versions.publish(_model(tmp_path), tmp_path / "m", 4, source_uri="uri://model",
                            record={"spans": [1, 2], "accuracy": 0.93})
    record = versions.provenance(path)
    assert record["version"] == 4 and record["source_uri"] == "uri://model"
    assert record["spans"] == [1, 2] and record["accuracy"] == 0.93
    assert abs(record["pushed_at"] - time.time()) < 60


def _pushed(tmp_path, *numbers, base=None):
    base = base or str(tmp_path / "serving" / "m")
    model = tmp_path / "model" if (tmp_path / "model").exists() else _model(tmp_path)
    for number in numbers:
        versions.publish(str(model), base, number, source_uri=f"uri://{number}")
    return base


def test_the_highest_complete_version_is_served_until_a_pin_says_otherwise(tmp_path):
    base = _pushed(tmp_path, 1, 2, 3)
    os.makedirs(os.path.join(base, "4"))  # no saved_model.pb: TF Serving could not load it
    assert versions.served_version(base) == 3
    versions.write_serving_state(base, versions.ServingState(pinned=2, rolled_back=(3,)))
    assert versions.served_version(base) == 2
    assert versions.serving_state(base) == versions.ServingState(2, (3,))
    # One file for every model of the serving root, each model its own entry.
    other = _pushed(tmp_path, 7, base=str(tmp_path / "serving" / "other"))
    versions.write_serving_state(other, versions.ServingState(None, ()))
    assert set(versions.read_served(tmp_path / "serving")) == {"m", "other"}
    assert versions.served_version(base) == 2


def test_in_service_is_the_served_version_then_those_below_it_never_a_rolled_back_one(
        tmp_path):
    base = _pushed(tmp_path, 1, 2, 3, 4)
    os.makedirs(os.path.join(base, "5"))  # incomplete
    assert versions.in_service(base) == [4, 3, 2, 1]
    versions.write_serving_state(base, versions.ServingState(pinned=2, rolled_back=(3, 4)))
    assert versions.in_service(base) == [2, 1]
    versions.write_serving_state(base, versions.ServingState(pinned=None, rolled_back=(4,)))
    assert versions.in_service(base) == [3, 2, 1]
    assert versions.in_service(str(tmp_path / "nothing")) == []


def test_a_new_highest_version_lifts_the_pin_and_older_or_rolled_back_ones_do_not(tmp_path):
    base = _pushed(tmp_path, 1, 2, 3)
    versions.write_serving_state(base, versions.ServingState(pinned=1, rolled_back=(2, 3)))
    versions.unpin_for(base, 1)  # an older model's version, kept by a re-run
    assert versions.serving_state(base).pinned == 1
    versions.unpin_for(base, 3)  # taken out of service: never served again
    assert versions.serving_state(base).pinned == 1
    _pushed(tmp_path, 4, base=base)
    versions.unpin_for(base, 4)
    assert versions.serving_state(base) == versions.ServingState(None, (2, 3))
    assert versions.served_version(base) == 4


def test_the_tflite_pointer_follows_the_served_version(tmp_path):
    base, tflite = _pushed(tmp_path, 1, 2, 3, 4), tmp_path / "tflite" / "m"
    for number in (1, 3, 4):  # version 2 failed the parity gate: no TFLite
        (tflite / str(number)).mkdir(parents=True)
        (tflite / str(number) / "model.tflite").write_bytes(b"tflite")
    assert versions.point_tflite(str(tflite), base) == 4
    assert (tflite / "CURRENT").read_text() == "4\n"
    versions.write_serving_state(base, versions.ServingState(pinned=2, rolled_back=(3, 4)))
    assert versions.point_tflite(str(tflite), base) == 1  # 2 has none: the one before it
    assert versions.read_pointer(str(tflite)) == 1
    versions.write_serving_state(base, versions.ServingState(pinned=1, rolled_back=(1, 2)))
    assert versions.point_tflite(str(tflite), base) is None
    assert not (tflite / "CURRENT").exists()
    assert versions.point_tflite(str(tmp_path / "no-tflite"), base) is None


def test_a_served_record_that_is_not_json_is_refused_naming_it(tmp_path):
    base = _pushed(tmp_path, 1)
    (tmp_path / "serving" / "served.json").write_text("{not json")
    with pytest.raises(StorageError, match="served.json is not JSON"):
        versions.served_version(base)


def test_the_served_record_and_the_pointer_work_on_object_stores(tmp_path):
    import tensorflow as tf
    root = "ram://versions-served-test"
    base = _pushed(tmp_path, 5, 6, base=f"{root}/serving/m")
    tf.io.gfile.makedirs(f"{root}/tflite/m/5")
    with tf.io.gfile.GFile(f"{root}/tflite/m/5/model.tflite", "wb") as f:
        f.write(b"tflite")
    versions.write_serving_state(base, versions.ServingState(pinned=5, rolled_back=(6,)))
    assert versions.served_version(base) == 5
    assert versions.point_tflite(f"{root}/tflite/m", base) == 5
    assert versions.read_pointer(f"{root}/tflite/m") == 5
