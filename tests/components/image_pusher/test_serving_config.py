"""models.config lists every pushed model, pinned ones with their version; batching.config
is there for --enable_batching."""
from components.image_pusher.serving_config import write_serving_configs


def test_models_config_lists_each_model_with_its_absolute_base_path(tmp_path):
    for name in ("digits", "flowers"):
        (tmp_path / name / "1").mkdir(parents=True)
    (tmp_path / ".digits.partial").mkdir()
    write_serving_configs(str(tmp_path))
    text = (tmp_path / "models.config").read_text()
    assert text.count("config {") == 2
    assert f'base_path: "{tmp_path / "digits"}"' in text
    assert 'name: "flowers"' in text
    assert "partial" not in text
    assert "max_batch_size" in (tmp_path / "batching.config").read_text()


def test_models_config_on_an_object_store_keeps_the_uri():
    import tensorflow as tf
    from components.image_pusher.serving_config import write_serving_configs
    root = "ram://serving-config-test/serving"
    tf.io.gfile.makedirs(root + "/digits/1")
    write_serving_configs(root)
    with tf.io.gfile.GFile(root + "/models.config") as f:
        assert f'base_path: "{root}/digits"' in f.read()
    assert tf.io.gfile.exists(root + "/batching.config")


def test_a_pinned_model_gets_a_specific_version_policy_that_tf_serving_parses(tmp_path):
    from google.protobuf import text_format
    from tensorflow_serving.config import model_server_config_pb2

    from components.image_pusher.versions import ServingState, write_serving_state
    for name in ("digits", "flowers"):
        (tmp_path / name / "1").mkdir(parents=True)
    write_serving_state(str(tmp_path / "digits"), ServingState(pinned=1, rolled_back=(2,)))
    write_serving_configs(str(tmp_path))
    parsed = text_format.Parse((tmp_path / "models.config").read_text(),
                               model_server_config_pb2.ModelServerConfig())
    configs = {c.name: c for c in parsed.model_config_list.config}
    assert list(configs["digits"].model_version_policy.specific.versions) == [1]
    assert not configs["flowers"].HasField("model_version_policy")  # the highest, as before
    assert "served.json" not in (tmp_path / "models.config").read_text()
