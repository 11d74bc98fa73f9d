"""What a local run of a compiled package did: each task's state, and the outputs it left."""
import dataclasses
import re
from typing import Any, Dict, Optional

from core.contract import EXAMPLE_GEN_ID, PUSHER_ID, TRAINER_ID

DONE, CACHED, SKIPPED = "done", "cached", "skipped"
# ImageExampleGen's output and the metadata its executor writes there
# (TFX's standard_component_specs.EXAMPLES_KEY; components/image_example_gen/novelty.py):
# kept as text so that run_local.py reads them without importing TFX.
EXAMPLES_KEY = "examples"
NEW_DATA = "new_data"
NEW_DATA_REASON = "new_data_reason"
RETRYING = "retrying after"  # the start of its reason when a failed try is tried again
# The Pusher's output and its verdict (components/image_pusher/refusal.py's properties).
PUSHED_MODEL_KEY, VERDICT, VERDICT_REASON = "pushed_model", "verdict", "verdict_reason"
# A traceback's last line: `package.module.SomeError: message`.
EXCEPTION_LINE = re.compile(r"^([A-Za-z_]\w*\.)*[A-Z]\w*(Error|Exception|Failure|Failed): ")


@dataclasses.dataclass(frozen=True)
class TaskState:
    """done (its process ran), cached (a cache hit) or skipped (and why)."""

    state: str
    seconds: float = 0.0
    why: str = ""

    def line(self, task: str) -> str:
        """The line the run prints for the task."""
        if self.state == DONE:
            return f"done  {task} {self.seconds:.1f} s"
        if self.state == CACHED:
            return f"cached {task}"
        return f"skipped {task} ({self.why})"


@dataclasses.dataclass
class RunResult:
    """A run's root, its tasks' states, and their outputs as MLMD holds them.

    `states` is in topological order, whatever order the tasks ended in (they
    run in parallel), so that two runs of a package list their tasks alike.

    `outputs[task]` is {"artifacts": {key: {"name", "uri", "metadata"}},
    "parameters": {key: value}}: what the next task, or a later cache hit, gets.
    """

    root: str
    run_id: str
    states: Dict[str, TaskState] = dataclasses.field(default_factory=dict)
    outputs: Dict[str, Dict[str, Any]] = dataclasses.field(default_factory=dict)

    def artifact(self, task: str, key: str) -> Optional[Dict[str, Any]]:
        """The task's output artifact `key` (name, uri, metadata), or None if it made none."""
        return self.outputs.get(task, {}).get("artifacts", {}).get(key)

    def metadata(self, task: str, key: str) -> Dict[str, Any]:
        """The metadata of the task's output artifact `key`; {} if there is none."""
        return (self.artifact(task, key) or {}).get("metadata", {})

    def count(self, state: str) -> int:
        """How many tasks ended in `state`."""
        return sum(1 for task in self.states.values() if task.state == state)


def nothing_new(result: RunResult) -> Optional[str]:
    """Why nothing was trained when the Trainer was skipped or cached; None when it ran.

    ImageExampleGen's own reason when its examples say the data is not new,
    else how many tasks the conditions skipped and the cache answered.
    """
    trainer = result.states.get(TRAINER_ID)
    if trainer is None or trainer.state == DONE:
        return None
    examples = result.metadata(EXAMPLE_GEN_ID, EXAMPLES_KEY)
    if examples.get(NEW_DATA) == 0 and examples.get(NEW_DATA_REASON):
        return str(examples[NEW_DATA_REASON])
    reasons = [f"{result.count(SKIPPED)} tasks skipped by their trigger conditions"]
    if result.count(CACHED):
        reasons.append(f"{result.count(CACHED)} reused from the cache")
    return ", ".join(reasons)


def retried(result: RunResult) -> Optional[str]:
    """ImageExampleGen's reason when it went ahead on inputs whose last try failed
    (components/image_pusher/judged_inputs.py), else None."""
    examples = result.metadata(EXAMPLE_GEN_ID, EXAMPLES_KEY)
    reason = str(examples.get(NEW_DATA_REASON) or "")
    return reason if examples.get(NEW_DATA) == 1 and reason.startswith(RETRYING) else None


def verdict(result: RunResult) -> Optional[str]:
    """"<kind>: <why>" of the Pusher's verdict (pushed, model, data), or None where no
    Pusher ran in this run."""
    if (result.states.get(PUSHER_ID) or TaskState(SKIPPED)).state != DONE:
        return None
    pushed = result.metadata(PUSHER_ID, PUSHED_MODEL_KEY)
    if not pushed.get(VERDICT):
        return None
    return f"{pushed[VERDICT]}: {pushed.get(VERDICT_REASON)}"


def failure_reason(log_path: str) -> Optional[str]:
    """The last line of a failed task's log that names an error (its exception's message,
    or an imagepipe alert), or None."""
    try:
        with open(log_path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return None
    for line in reversed(lines):
        if "imagepipe alert:" in line or EXCEPTION_LINE.match(line) or line.startswith("driver:"):
            return line[-1000:]
    return lines[-1][-1000:] if lines else None
