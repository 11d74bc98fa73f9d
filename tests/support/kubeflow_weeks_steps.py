"""The steps of tests/e2e/test_kubeflow_weeks.py, run inside `scripts/with_gcs.sh`.

    bash scripts/with_gcs.sh -- \
        .venv/bin/python -m tests.support.kubeflow_weeks_steps RESULTS.json WORKDIR

Four "weeks" of a scheduled compiled pipeline on a gs:// pipeline root, each
a run of the same package through kubeflow/run_local.py (the open-source
backend's behaviour): span 1; no new span; span 2; a drifted span 3. Then
weeks 1 and 2 again on another root with --keep-types, as Vertex passes
artifacts. Writes what each week printed, its step states and what the push
destination holds, for the test to check.
"""
import json
import os
import re
import sys
import tempfile

from tests.support.digits import make_span
from tests.support.gcs_harness import command
from tests.support.paths import IMAGEPIPE, RUN_LOCAL

BUCKET = "gs://imagepipe-test"
PER_CLASS = 10  # images per class and span: 100 a span
STATE = re.compile(r"^(done|cached|skipped)\s+(\S+)")
# What the compiled runs share: tiny training, no threshold, a baseline that never
# refuses (this test is about the schedule, not the model's quality).
COMPILE_FLAGS = ["--image", "example.com/ip:1", "--image-size", "28", "--channels", "1",
                 "--train-steps", "3", "--accuracy-threshold", "0",
                 "--baseline-tolerance", "1", "--quantize", "none"]


def _command(*args, timeout=900) -> dict:
    return command(*args, cwd=WORKDIR, timeout=timeout)


def _upload(number: int, inverted: bool = False) -> None:
    """Span `number`'s digits (the next PER_CLASS of each class), marked complete, to the
    bucket; `inverted` makes them light on dark -> dark on light (brightness drift)."""
    from core.storage.tree_copy import copy_tree
    span = make_span(os.path.join(WORKDIR, "spans", f"span-{number}"), invert=inverted,
                     take=slice((number - 1) * PER_CLASS, number * PER_CLASS))
    copy_tree(str(span), f"{BUCKET}/spans/span-{number}")


def _pushed(root: str) -> dict:
    """Version -> its provenance record, from the push destination."""
    from components.image_pusher.versions import provenance, versions
    serving = f"{root}/serving/imagepipe"
    return {str(v): provenance(f"{serving}/{v}") for v in versions(serving)}


def _week(spec: str, root: str, keep_types: bool = False) -> dict:
    run = _command(sys.executable, str(RUN_LOCAL), spec,
                   *(["--keep-types"] if keep_types else []))
    states, run_root = {}, None
    for line in run["stdout"].splitlines():
        match = STATE.match(line)
        if match:
            states[match.group(2)] = match.group(1)
        if line.startswith("succeeded: "):
            run_root = line.split(" ", 1)[1]
    return {**run, "states": states, "pushed": _pushed(root), "drift": _drift(run_root)}


def _drift(run_root) -> dict:
    """The drift verdict the Evaluator recorded on its blessing, if it ran."""
    from core.contract import read_drift
    from core.storage import files
    blessing = f"{run_root}/Evaluator/blessing"
    return read_drift(blessing) if run_root and files.exists(blessing) else None


def _compile(root: str) -> str:
    spec = os.path.join(WORKDIR, f"spec-{os.path.basename(root)}.yaml")
    compiled = _command(str(IMAGEPIPE), "compile",
                        "--target", "kubeflow", "--pipeline-root", root,
                        "--data", f"{BUCKET}/spans/span-{{SPAN}}", *COMPILE_FLAGS,
                        "--output-file", spec)
    if compiled["code"] != 0:
        raise RuntimeError(f"compile failed: {compiled['stderr']}")
    return spec


def weeks(results: dict, save) -> None:
    """The four weeks on one root, and weeks 1 and 2 with --keep-types on another;
    `save()` after each, so that a hang still leaves what ran."""
    root, typed_root = f"{BUCKET}/root", f"{BUCKET}/typed"
    spec, typed_spec = _compile(root), _compile(typed_root)
    _upload(1)
    for name, run in (("week1", lambda: _week(spec, root)),
                      ("week2", lambda: _week(spec, root)),
                      ("typed_week1", lambda: _week(typed_spec, typed_root, keep_types=True)),
                      ("typed_week2", lambda: _week(typed_spec, typed_root, keep_types=True)),
                      ("week3", lambda: (_upload(2), _week(spec, root))[1]),
                      ("week4", lambda: (_upload(3, inverted=True), _week(spec, root))[1])):
        results[name] = run()
        save()


def main(results_path: str) -> None:
    results = {}

    def save():
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)

    try:
        weeks(results, save)
    except Exception:  # noqa: BLE001  (the test shows it)
        import traceback
        results["raised"] = traceback.format_exc()[-5000:]
    save()


if __name__ == "__main__":
    WORKDIR = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    os.makedirs(WORKDIR, exist_ok=True)
    main(sys.argv[1])
