"""The steps of tests/e2e/test_kubeflow_weeks.py, run inside `scripts/with_gcs.sh`.

    bash scripts/with_gcs.sh -- \
        .venv/bin/python -m tests.support.kubeflow_weeks_steps RESULTS.json WORKDIR [typed]

Weeks of a scheduled compiled pipeline on a gs:// pipeline root, each a run of
the same package through kubeflow/run_local.py (the open-source backend's
behaviour):
1. span 1, pushed;
2. no new span: nothing trained;
3. span 2, but the serving check hangs (tests/support/faults/sitecustomize.py)
   and times out: the run fails, and nothing is judged;
4. no new span, and the check works: the run retries the same inputs and pushes;
5. a drifted span 3: judged on the data, nothing pushed;
then `imagepipe gc` keeping one version, and
6. span 4 (span 3's images again, so no drift against it): warm start and baseline
   from the version gc kept, pushed; then `imagepipe rollback` to that version.
With `typed`: weeks 1 and 2 on another root with --keep-types, as Vertex passes
artifacts. Writes what each week printed, its step states, its judged.json
entry and what the push destination holds, for the test to check.
"""
import json
import os
import re
import sys
import tempfile

from tests.support.digits import make_span
from tests.support.gcs_harness import command
from tests.support.paths import IMAGEPIPE, REPO, RUN_LOCAL

BUCKET = "gs://imagepipe-test"
PER_CLASS = 10  # images per class and span: 100 a span
# The serving check's limit: ample for the check on 28x28 digits (seconds here), short
# for the week whose check hangs.
SERVING_TIMEOUT_S = 45
STATE = re.compile(r"^(done|cached|skipped)\s+(\S+)")
# What the compiled runs share: tiny training, no threshold, a baseline that never
# refuses (this test is about the schedule, not the model's quality).
COMPILE_FLAGS = ["--image", "example.com/ip:1", "--image-size", "28", "--channels", "1",
                 "--train-steps", "3", "--accuracy-threshold", "0",
                 "--baseline-tolerance", "1", "--quantize", "none",
                 "--serving-timeout", str(SERVING_TIMEOUT_S)]
FAULTS = str(REPO / "tests" / "support" / "faults")


def _stalled() -> dict:
    """The environment of a week whose serving check hangs (tests/support/faults/)."""
    path = os.pathsep.join(p for p in (FAULTS, os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "IMAGEPIPE_TEST_FAULT": "stall-serving"}


def _command(*args, timeout=900, env=None) -> dict:
    return command(*args, cwd=WORKDIR, timeout=timeout,
                   env={**os.environ, **env} if env else None)


def _upload(number: int, inverted: bool = False, images_of: int = None) -> None:
    """Span `number`'s digits (the next PER_CLASS of each class, or those of span
    `images_of`), marked complete, to the bucket; `inverted` makes them light on dark ->
    dark on light (brightness drift)."""
    from core.storage.tree_copy import copy_tree
    first = (images_of or number) - 1
    span = make_span(os.path.join(WORKDIR, "spans", f"span-{number}"), invert=inverted,
                     take=slice(first * PER_CLASS, (first + 1) * PER_CLASS))
    copy_tree(str(span), f"{BUCKET}/spans/span-{number}")


def _pushed(root: str) -> dict:
    """Version -> its provenance record, from the push destination."""
    from components.image_pusher.versions import provenance, versions
    serving = f"{root}/serving/imagepipe"
    return {str(v): provenance(f"{serving}/{v}") for v in versions(serving)}


def _week(spec: str, root: str, keep_types: bool = False, env=None) -> dict:
    run = _command(sys.executable, str(RUN_LOCAL), spec,
                   *(["--keep-types"] if keep_types else []), env=env)
    states, run_root = {}, None
    for line in run["stdout"].splitlines():
        match = STATE.match(line)
        if match:
            states[match.group(2)] = match.group(1)
        if line.startswith("succeeded: "):
            run_root = line.split(" ", 1)[1]
    return {**run, "states": states, "pushed": _pushed(root), "drift": _drift(run_root),
            "judged": _judged(root), "run_root": run_root}


def _judged(root: str):
    """The model's judged.json entry (components/image_pusher/judged_inputs.py)."""
    from components.image_pusher.judged_inputs import last_judged
    return last_judged(f"{root}/serving/imagepipe")


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
    """The weeks on one root (module docstring); `save()` after each, so that a hang still
    leaves what ran."""
    root = f"{BUCKET}/root"
    spec = _compile(root)
    _upload(1)
    for name, run in (("week1", lambda: _week(spec, root)),
                      ("week2", lambda: _week(spec, root)),
                      ("week3", lambda: (_upload(2), _week(spec, root, env=_stalled()))[1]),
                      ("week4", lambda: _week(spec, root)),
                      ("week5", lambda: (_upload(3, inverted=True), _week(spec, root))[1]),
                      ("gc", lambda: _gc(root)),
                      # Span 3's images again: other inverted digits can differ from span
                      # 3's by just over the brightness threshold (measured: JS 0.11).
                      ("week6", lambda: (_upload(4, inverted=True, images_of=3),
                                         _week(spec, root))[1]),
                      ("rollback", lambda: _rollback(root, results))):
        results[name] = run()
        save()


def typed_weeks(results: dict, save) -> None:
    """Weeks 1 and 2 with --keep-types, as Vertex passes artifacts."""
    root = f"{BUCKET}/typed"
    spec = _compile(root)
    _upload(1)
    for name in ("typed_week1", "typed_week2"):
        results[name] = _week(spec, root, keep_types=True)
        save()


def _sizes(root: str) -> int:
    from core.storage import files
    return sum(found.size for found in files.walk_files(root))


def _gc(root: str) -> dict:
    """`imagepipe gc` keeping one version, with the root's size before and after."""
    before = _sizes(root)
    report = os.path.join(WORKDIR, "gc.json")
    run = _command(str(IMAGEPIPE), "gc", "--output", root, "--keep-versions", "1",
                   "--min-age", "0", "--yes", "--json", report)
    with open(report) if os.path.exists(report) else open(os.devnull) as f:
        record = json.loads(f.read() or "null")
    return {**run, "before": before, "after": _sizes(root), "record": record,
            "pushed": _pushed(root)}


def _rollback(root: str, results: dict) -> dict:
    """`imagepipe rollback` from week 6's version to the one gc kept."""
    kept = max(results["gc"]["pushed"], key=int)
    run = _command(str(IMAGEPIPE), "rollback", "--output", root, "--to", kept)
    from components.image_pusher.versions import served_version
    return {**run, "to": int(kept), "served": served_version(f"{root}/serving/imagepipe")}


def main(results_path: str) -> None:
    results = {}

    def save():
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)

    try:
        (typed_weeks if MODE == "typed" else weeks)(results, save)
    except Exception:  # noqa: BLE001  (the test shows it)
        import traceback
        results["raised"] = traceback.format_exc()[-5000:]
    save()


if __name__ == "__main__":
    WORKDIR = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    MODE = sys.argv[3] if len(sys.argv) > 3 else "weeks"
    os.makedirs(WORKDIR, exist_ok=True)
    main(sys.argv[1])
