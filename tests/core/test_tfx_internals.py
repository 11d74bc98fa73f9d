"""TFX's private names that imagepipe uses still exist: an upgrade that moves one fails here."""
import inspect

from core import tfx_internals


def test_every_private_tfx_name_still_exists():
    missing = [name for name, found in tfx_internals.required().items() if found is None]
    assert not missing, (f"TFX moved or removed: {missing}; update "
                         "core/tfx_internals.py")


def test_the_push_marks_keep_their_signatures():
    from tfx.components.pusher import executor
    params = inspect.signature(executor.Executor._MarkPushed).parameters
    assert {"model_push", "pushed_destination", "pushed_version"} <= set(params)


def test_mark_pushed_sets_the_properties_the_stock_pusher_sets():
    from tfx.components.pusher import executor
    from tfx.types import standard_artifacts
    pushed = standard_artifacts.PushedModel()
    tfx_internals.mark_pushed(executor.Executor(), pushed, "/serving/m/7", "7")
    assert pushed.get_int_custom_property("pushed") == 1
    assert pushed.get_string_custom_property("pushed_destination") == "/serving/m/7"
    assert pushed.get_string_custom_property("pushed_version") == "7"
    tfx_internals.mark_not_pushed(executor.Executor(), pushed)
    assert pushed.get_int_custom_property("pushed") == 0


def test_the_launcher_exposes_the_node_id_it_runs():
    launcher = tfx_internals.launcher_class()
    source = inspect.getsource(launcher.__init__)
    assert "self._pipeline_node = pipeline_node" in source
