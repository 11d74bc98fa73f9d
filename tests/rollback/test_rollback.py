"""`imagepipe rollback`: pin, models.config and the TFLite pointer change together, the
refusals name the version, and ML Metadata makes the served model the next baseline."""
import os

import pytest

from components.resolvers.latest_blessed_other import pick_baseline
from components.image_pusher.versions import ServingState, read_pointer, serving_state
from rollback.revocations import ROLLBACK_TYPE, open_store
from rollback.rollback import plan_rollback, rollback
from core.errors import UsageError


def _models_config(config) -> str:
    with open(os.path.join(config.run.output, "serving", "models.config")) as f:
        return f.read()


def test_the_default_target_is_the_served_versions_predecessor(pushed):
    config = pushed.config
    plan = rollback(config, None)
    assert (plan.from_version, plan.to_version, plan.revoked) == (300, 200, (300,))
    assert serving_state(config.serving_dir) == ServingState(200, (300,))
    assert "specific { versions: 200 }" in _models_config(config)
    assert read_pointer(config.tflite_dir) == 100  # 200 has no TFLite: the one before it
    assert not os.path.exists(config.metadata_path)  # no store, none made
    again = rollback(config, None)
    assert (again.from_version, again.to_version) == (200, 100)
    assert serving_state(config.serving_dir) == ServingState(100, (200, 300))


@pytest.mark.parametrize("to, words", [(999, "--to 999: no such version"),
                                       (400, "--to 400: version 400 is incomplete"),
                                       (300, "--to 300: version 300 is already the one served")])
def test_an_unknown_incomplete_or_served_version_is_refused(pushed, to, words):
    os.makedirs(os.path.join(pushed.config.serving_dir, "400", "variables"))  # never finished
    with pytest.raises(UsageError, match=words):
        plan_rollback(pushed.config.serving_dir, to)


def test_the_oldest_version_has_nothing_to_roll_back_to(pushed):
    rollback(pushed.config, 100)
    with pytest.raises(UsageError, match="nothing to roll back to .*--to VERSION"):
        rollback(pushed.config, None)


def test_a_rollback_that_fails_midway_leaves_every_file_as_it_was(pushed):
    config = pushed.config
    root = os.path.join(config.run.output, "serving")
    with open(os.path.join(root, "models.config"), "rb") as f:
        before = f.read()
    # The pointer's temporary file cannot be written: the third of the three writes fails.
    os.makedirs(os.path.join(config.tflite_dir, f"CURRENT.tmp-{os.getpid()}"))
    with pytest.raises(IsADirectoryError, match="CURRENT.tmp"):
        rollback(config, 100)
    assert not os.path.exists(os.path.join(root, "served.json"))
    with open(os.path.join(root, "models.config"), "rb") as f:
        assert f.read() == before
    assert read_pointer(config.tflite_dir) == 300
    assert serving_state(config.serving_dir) == ServingState(None, ())


def test_ml_metadata_records_the_rollback_and_the_baseline_is_the_served_model(
        pushed, recorded, resolved):
    config = pushed.config
    rollback(config, None)  # 300 -> 200
    models, blessings = resolved(config, "Model"), resolved(config, "ModelBlessing")
    picked = pick_baseline(models, blessings, exclude_ids=[])
    assert [m.id for m in picked["model"]] == [recorded[200]]
    revocation = max(blessings, key=lambda b: b.id)
    assert revocation.get_int_custom_property("current_model_id") == recorded[300]
    assert revocation.get_int_custom_property("revoked") == 1
    assert revocation.get_int_custom_property("blessed") == 0
    store = open_store(config.metadata_path)
    [execution] = store.get_executions_by_type(ROLLBACK_TYPE)
    assert execution.properties["from_version"].int_value == 300
    assert execution.properties["to_version"].int_value == 200


def test_serving_a_rolled_back_version_again_restores_it_as_a_baseline(pushed, recorded,
                                                                       resolved):
    config = pushed.config
    rollback(config, 100)
    plan = rollback(config, 300)  # it was a mistake
    assert plan.restored and serving_state(config.serving_dir) == ServingState(300, (200,))
    assert read_pointer(config.tflite_dir) == 300
    picked = pick_baseline(resolved(config, "Model"), resolved(config, "ModelBlessing"), [])
    assert [m.id for m in picked["model"]] == [recorded[300]]
    picked = pick_baseline(resolved(config, "Model"), resolved(config, "ModelBlessing"),
                           [recorded[300]])
    assert [m.id for m in picked["model"]] == [recorded[100]]  # 200 stays revoked


def test_rollback_and_versions_work_on_an_object_store(tmp_path):
    import tensorflow as tf

    from components.image_pusher.versions import publish
    from settings.config import PipelineConfig
    from rollback.version_list import list_versions
    config = PipelineConfig.from_values(output="ram://rollback-test/out")
    (tmp_path / "saved_model.pb").write_bytes(b"graph")
    for number in (1, 2):
        publish(str(tmp_path), config.serving_dir, number, source_uri=f"uri://{number}")
        tf.io.gfile.makedirs(f"{config.tflite_dir}/{number}")
        with tf.io.gfile.GFile(f"{config.tflite_dir}/{number}/model.tflite", "wb") as f:
            f.write(b"tflite")
    assert rollback(config, None).to_version == 1
    assert serving_state(config.serving_dir) == ServingState(1, (2,))
    assert read_pointer(config.tflite_dir) == 1
    with tf.io.gfile.GFile("ram://rollback-test/out/serving/models.config") as f:
        assert "specific { versions: 1 }" in f.read()
    rows = list_versions(config)["versions"]
    assert [(r["served"], r["rolled_back"]) for r in rows] == [(True, False), (False, True)]
