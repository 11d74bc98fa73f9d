"""One line per component as it starts and finishes, with its time and a cache-hit marker.

Why patch `Launcher.launch`: TFX's LocalDagRunner has no callbacks. Its only
progress signal is an absl INFO log per component, and the quiet default hides
absl INFO along with the noise. The launcher is the one call per component;
wrapping it (only inside `component_lines`) sees start, end and failure, and
MLMD then says whether the execution was a cache hit.
"""
import contextlib
import sys
import time
from typing import Callable, Iterator, Optional

from core import tfx_internals


def format_line(event: str, node: str, seconds: float = None, cached: bool = False) -> str:
    timing = "" if seconds is None else f"{seconds:7.1f}s"
    return f"{event:<9} {node:<30}{timing}{'  cached' if cached else ''}".rstrip()


def was_skipped(result) -> bool:
    """Whether a launch ran nothing because its condition was false: TFX's launcher then
    returns an ExecutionInfo with no execution (launcher._prepare_execution, Skip)."""
    return result is not None and getattr(result, "execution_id", 0) is None


def _cached(was_cached: Callable[[str], bool], node: str) -> bool:
    """The marker only: a failed MLMD lookup must not fail a component that succeeded."""
    try:
        return was_cached(node)
    except Exception:  # noqa: BLE001  (e.g. sqlite "database is locked")
        return False


@contextlib.contextmanager
def component_lines(was_cached: Callable[[str], bool], out=sys.stdout,
                    after: Optional[Callable[[str, bool], None]] = None) -> Iterator[None]:
    """Within the block, every component launch prints a start and an end line.

    `was_cached(node_id)` is asked after a component finishes; then
    `after(node_id, cached)` is told, if given.
    """
    launcher_class = tfx_internals.launcher_class()
    original = launcher_class.launch

    def launch(self):
        node = tfx_internals.launched_node_id(self)
        print(format_line("start", node), file=out, flush=True)
        start = time.time()
        try:
            result = original(self)
        except BaseException:
            print(format_line("FAILED", node, time.time() - start), file=out, flush=True)
            raise
        if was_skipped(result):
            print(format_line("skipped", node), file=out, flush=True)
        else:
            cached = _cached(was_cached, node)
            print(format_line("done", node, time.time() - start, cached), file=out, flush=True)
            if after is not None:
                after(node, cached)
        return result

    launcher_class.launch = launch
    try:
        yield
    finally:
        launcher_class.launch = original
