"""A cluster's other workers: where they write what the chief keeps, and their wait."""
import os
import tempfile
import time

from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py

from core.contract import decode_cache_folder
from core.storage import files
from modules.params import TrainerParams


def scratch_folder(fn_args: FnArgs, params: TrainerParams) -> str:
    """Where a worker other than the chief writes what the chief keeps.

    On a local run, beside the decode caches and named like them with this
    process, so that a worker killed outright leaves nothing the next run
    does not remove (pipeline/local/state.py); on a cluster, the pod's temp.
    """
    if not params.cache_root:
        return tempfile.mkdtemp(prefix="imagepipe-worker-")
    execution = os.path.basename(fn_args.model_run_dir) + "-worker"
    folder = decode_cache_folder(params.cache_root, execution, os.getpid())
    os.makedirs(folder, exist_ok=True)  # os: the state folder is never a bucket
    return folder


def wait_for(path: str, seconds: float) -> None:
    """Waits until the chief's model is there; RuntimeError after `seconds`."""
    deadline = time.monotonic() + seconds
    while not files.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the chief wrote no model ({path}) within {seconds:.0f} s")
        time.sleep(1.0)
