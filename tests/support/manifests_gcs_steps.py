"""The steps of tests/e2e/test_manifests_gcs.py, run inside `scripts/with_gcs.sh`.

    bash scripts/with_gcs.sh --seed SEED -- .venv/bin/python -m \
        tests.support.manifests_gcs_steps RESULTS.json WORKDIR NAME=gs://DATA... -- FLAGS...

SEED/imagepipe-test/ holds the digits as folders and in the dataset layouts (the test
writes them). For each NAME=DATA, in the order given, runs `imagepipe run --data DATA
--output gs://imagepipe-test/runs/NAME FLAGS...` (ML Metadata in WORKDIR/state/NAME), and
writes to RESULTS.json what each returned, the summary.json it wrote in the bucket and the
files of the serving version it pushed there.
"""
import json
import os
import sys

from tests.support.gcs_harness import command, run_and_record
from tests.support.paths import IMAGEPIPE

RUNS = "gs://imagepipe-test/runs"


def _run(name: str, data: str, workdir: str, flags: list) -> dict:
    """One `imagepipe run` from the bucket into the bucket, and what it left there."""
    from core.storage import files
    output = f"{RUNS}/{name}"
    result = command(str(IMAGEPIPE), "run", "--data", data, "--output", output,
                     "--state-dir", os.path.join(workdir, "state", name), *flags,
                     cwd=workdir)
    if result["code"] != 0:
        return result
    summary = json.loads(files.read_text(f"{output}/summary.json"))
    serving = summary["pushed"]["serving"]
    return {**result, "summary": summary,
            "pushed_files": sorted(files.listdir(serving)) if serving else []}


def steps(workdir: str, *args: str) -> dict:
    """{NAME: what its run returned and left} of each NAME=DATA in `args` before "--"; the
    arguments after it are every run's flags."""
    cut = args.index("--") if "--" in args else len(args)
    found = {}
    for run in args[:cut]:
        name, data = run.split("=", 1)
        found[name] = _run(name, data, workdir, list(args[cut + 1:]))
    return found


if __name__ == "__main__":
    run_and_record(steps, sys.argv[1], *sys.argv[2:])
