"""The steps of test_rollback_bucket.py, run inside `scripts/with_gcs.sh` (a real GCS server).

    bash scripts/with_gcs.sh --deny-bucket locked -- .venv/bin/python \
        -m tests.rollback.bucket_rollback_steps RESULTS.json WORKDIR

Lays out a compiled pipeline's push destination in gs://imagepipe-test/root
as its Pusher writes it, runs `imagepipe versions` and `imagepipe rollback`
on it, the compiled baseline step's executor, and a later push; writes what
each returned and left in the bucket to RESULTS.json.
"""
import json
import os
import sys

from tests.support.gcs_harness import command, run_and_record
from tests.support.paths import IMAGEPIPE, REPO

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ROOT = "gs://imagepipe-test/root"  # the compile's --pipeline-root


def _imagepipe(home: str, *args: str) -> dict:
    """One `imagepipe` command; HOME is `home`, where a state folder would be made."""
    return command(str(IMAGEPIPE), *args, cwd=REPO, timeout=120,
                   env={**os.environ, "HOME": home})


def _left(config) -> dict:
    """served.json, models.config and the TFLite pointer as the bucket holds them."""
    from core.storage import files
    from components.image_pusher.versions import SERVED_FILE, read_pointer
    from rollback.bucket_lock import LOCK_OBJECT
    serving = os.path.dirname(config.serving_dir)
    served = os.path.join(serving, SERVED_FILE)
    return {"served": json.loads(files.read_text(served)) if files.exists(served) else None,
            "models_config": files.read_text(os.path.join(serving, "models.config")),
            "current": read_pointer(config.tflite_dir),
            "lock": files.exists(os.path.join(ROOT, LOCK_OBJECT))}


def _baseline(config, candidate: str, run: str) -> dict:
    """The compiled pipeline's PushedBaseline executor, run on the bucket for a run whose
    Trainer made `candidate`: the version it picks, and whether it was copied."""
    from tfx.types import standard_artifacts
    from tfx.utils import path_utils

    from core.storage import files
    from components.pushed_baseline import executor
    model, baseline = standard_artifacts.Model(), standard_artifacts.Model()
    model.uri = candidate
    baseline.uri = f"{ROOT}/tfx/PushedBaseline/model/{run}"
    executor.Executor().Do({executor.CANDIDATE_KEY: [model]},
                           {executor.BASELINE_KEY: [baseline]},
                           {executor.SERVING_DIR_KEY: config.serving_dir})
    copied = os.path.join(path_utils.serving_model_path(baseline.uri), "saved_model.pb")
    return {"version": baseline.get_string_custom_property("pushed_version"),
            "copied": files.exists(copied)}


def _push_new(config, work: str) -> dict:
    """The Pusher's push of a newly blessed model, trained on a new span (4)."""
    from core.storage import files
    from components.image_pusher.push import PushInputs, push
    from components.image_pusher.settings import PushSettings
    model, tflite = os.path.join(work, "new"), os.path.join(work, "new_tflite")
    files.write_bytes(os.path.join(model, "saved_model.pb"), b"graph")
    files.write_bytes(os.path.join(tflite, "model.tflite"), b"tflite")
    uri = f"{config.pipeline_root}/Trainer/model/new"
    outcome = push(PushInputs(model, uri, config.serving_dir, {"spans": [4]}, tflite),
                   PushSettings(config.tflite_dir, False))
    return {"pushed": outcome.pushed, "version": outcome.version, "uri": uri,
            **_left(config)}


def _lock_twice() -> dict:
    """The bucket's lock object, taken while held: the store's precondition refuses."""
    from rollback.bucket_lock import bucket_lock
    from core.errors import UsageError
    with bucket_lock(ROOT):
        try:
            with bucket_lock(ROOT):
                return {"refused": None}
        except UsageError as e:
            return {"refused": str(e)}


def _steps(work: str) -> dict:
    from core.storage import files
    from settings.config import PipelineConfig
    from tests.rollback.pushes import lay_out
    config, home = PipelineConfig.from_values(output=ROOT), os.path.join(work, "home")
    found = {"laid_out": {str(v): u for v, u in lay_out(config, work).items()}}
    found["versions"] = _imagepipe(home, "versions", "--output", ROOT, "--json",
                                   f"{ROOT}/versions.json")
    found["unknown_to"] = _imagepipe(home, "rollback", "--output", ROOT, "--to", "999")
    found["refused_bucket"] = _imagepipe(home, "versions", "--output", "gs://locked/root")
    found["listing"] = json.loads(files.read_text(f"{ROOT}/versions.json"))
    found["locked"] = _lock_twice()
    found["rollback"] = {**_imagepipe(home, "rollback", "--output", ROOT), **_left(config)}
    found["baseline"] = _baseline(config, f"{config.pipeline_root}/Trainer/model/next", "1")
    found["to_oldest"] = {**_imagepipe(home, "rollback", "--output", ROOT, "--to", "100"),
                          **_left(config)}
    found["nothing_left"] = _imagepipe(home, "rollback", "--output", ROOT)
    found["push"] = _push_new(config, work)
    found["baseline_after_push"] = _baseline(
        config, f"{config.pipeline_root}/Trainer/model/later", "2")
    found["baseline_of_the_new"] = _baseline(config, found["push"]["uri"], "3")
    found["state_folders"] = os.path.exists(os.path.join(home, ".cache", "imagepipe"))
    return found


if __name__ == "__main__":
    run_and_record(_steps, sys.argv[1], sys.argv[2])
