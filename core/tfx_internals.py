"""Every use of TFX's private names, in one place (tfx is pinned to 1.16.0).

TFX offers no public API for these, and a TFX upgrade may move or rename any
of them. tests/core/test_tfx_internals.py asks for each one, so an
upgrade fails there, by name, instead of deep inside a pipeline run.
"""
from typing import Any, Callable, Dict, List


def required() -> Dict[str, Any]:
    """{dotted name: the object it names}: each private name used below, for the test."""
    from tfx.components.pusher import executor as pusher_executor
    from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor
    from tfx.orchestration.portable import launcher
    found = {"tfx.components.pusher.executor.Executor._MarkPushed":
             getattr(pusher_executor.Executor, "_MarkPushed", None),
             "tfx.components.pusher.executor.Executor._MarkNotPushed":
             getattr(pusher_executor.Executor, "_MarkNotPushed", None),
             "tfx.components.pusher.executor.Executor._log_startup":
             getattr(pusher_executor.Executor, "_log_startup", None),
             "tfx.orchestration.kubeflow.v2.container.kubeflow_v2_run_executor._parse_flags":
             getattr(kubeflow_v2_run_executor, "_parse_flags", None),
             "tfx.orchestration.portable.launcher.Launcher.launch":
             getattr(launcher.Launcher, "launch", None)}
    return found


def log_startup(executor, inputs: Dict[str, List], outputs: Dict[str, List],
                exec_properties: Dict[str, Any]) -> None:
    """The stock executors' start-of-execution log line (BaseExecutor._log_startup)."""
    executor._log_startup(inputs, outputs, exec_properties)  # noqa: SLF001


def mark_pushed(executor, model_push, destination: str, version: str) -> None:
    """Sets the PushedModel's `pushed`, `pushed_destination` and `pushed_version`
    properties exactly as the stock Pusher does (Evaluator baselines and TFX's
    own resolvers read them)."""
    executor._MarkPushed(model_push, pushed_destination=destination,  # noqa: SLF001
                         pushed_version=version)


def mark_not_pushed(executor, model_push) -> None:
    """Sets `pushed` to 0 as the stock Pusher does."""
    executor._MarkNotPushed(model_push)  # noqa: SLF001


def v2_entrypoint_flags_parser() -> Callable:
    """TFX's own absl flag parser for its Kubeflow V2 container entrypoint."""
    from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_run_executor
    return kubeflow_v2_run_executor._parse_flags  # noqa: SLF001


def launcher_class():
    """The portable launcher: LocalDagRunner calls `launch()` once per component."""
    from tfx.orchestration.portable import launcher
    return launcher.Launcher


def launched_node_id(launcher) -> str:
    """The component id a Launcher instance runs."""
    return launcher._pipeline_node.node_info.id  # noqa: SLF001
