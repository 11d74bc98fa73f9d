"""The steps of test_gc_bucket.py, run inside `scripts/with_gcs.sh` (a real GCS server).

    bash scripts/with_gcs.sh -- .venv/bin/python -m tests.retention.bucket_gc_steps \
        RESULTS.json WORKDIR

Lays out a compiled pipeline's root in gs://imagepipe-test/root (layouts.py), runs
`imagepipe gc` on it as a dry run and then with --yes, and writes what each returned and
what the bucket held after each to RESULTS.json.
"""
import json
import os
import sys

from tests.support.gcs_harness import command, run_and_record
from tests.support.paths import IMAGEPIPE, REPO

ROOT = "gs://imagepipe-test/root"  # the compile's --pipeline-root
RECORD = "gs://imagepipe-test/records/gc.json"
KEEP_TWO = ("--keep-versions", "2", "--min-age", "0")


def _imagepipe(home: str, *args: str) -> dict:
    """One `imagepipe` command; HOME is `home`, where a state folder would be made."""
    return command(str(IMAGEPIPE), *args, cwd=REPO, timeout=120,
                   env={**os.environ, "HOME": home})


def _objects() -> dict:
    """{object path under ROOT: size}."""
    from core.storage import files
    return {f.path[len(ROOT) + 1:]: f.size for f in files.walk_files(ROOT)}


def _steps(work: str) -> dict:
    from core.storage import files
    from rollback.bucket_lock import LOCK_OBJECT
    from settings.config import PipelineConfig
    from tests.retention.layouts import lay_out
    config, home = PipelineConfig.from_values(output=ROOT), os.path.join(work, "home")
    made = lay_out(config, work)
    found = {"made": made, "before": _objects()}
    found["dry_run"] = _imagepipe(home, "gc", "--output", ROOT, *KEEP_TWO)
    found["after_dry_run"] = _objects()
    found["yes"] = _imagepipe(home, "gc", "--output", ROOT, *KEEP_TWO, "--yes",
                              "--json", RECORD)
    found["after"] = _objects()
    found["record"] = json.loads(files.read_text(RECORD))
    found["lock_left"] = files.exists(os.path.join(ROOT, LOCK_OBJECT))
    found["state_folders"] = os.path.exists(os.path.join(home, ".cache", "imagepipe"))
    found["again"] = _imagepipe(home, "gc", "--output", ROOT, *KEEP_TWO)
    found["no_root"] = _imagepipe(home, "gc", "--output", "gs://imagepipe-test/typo")
    return found


if __name__ == "__main__":
    run_and_record(_steps, sys.argv[1], sys.argv[2])
