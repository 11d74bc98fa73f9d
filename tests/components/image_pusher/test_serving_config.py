"""models.config lists every pushed model; batching.config is there for --enable_batching."""
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
