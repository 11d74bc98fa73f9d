"""TF Serving config files written next to the pushed models.

`tensorflow_model_server --model_config_file=<serving root>/models.config
--enable_batching --batching_parameters_file=<serving root>/batching.config`
serves every model under the serving root as it is. The paths inside are
the ones of this machine; in a container, mount the serving root at the same
path or edit base_path. A model pinned in served.json (`imagepipe rollback`,
components/image_pusher/versions.py) gets a `specific` version policy; the others are
served at their highest version, TF Serving's default.
"""
import os
from typing import Optional

from core.storage import files
from components.image_pusher.versions import read_served

MODELS_CONFIG, BATCHING_FILE = "models.config", "batching.config"  # in the serving root
# Conservative defaults for CPU serving of small images; tune per deployment.
BATCHING_CONFIG = """max_batch_size { value: 32 }
batch_timeout_micros { value: 2000 }
max_enqueued_batches { value: 100 }
num_batch_threads { value: 4 }
"""


def _model_folders(serving_root: str):
    return [n for n in files.list_dir(serving_root)[0] if not n.startswith(".")]


def _policy(pinned: Optional[int]) -> str:
    if pinned is None:
        return ""
    return ("    model_version_policy {\n"
            f"      specific {{ versions: {int(pinned)} }}\n"
            "    }\n")


def models_config(serving_root: str) -> str:
    """A ModelServerConfig (text proto) listing every model folder under `serving_root`,
    each pinned model with its version policy."""
    root = files.absolute(serving_root)
    served = read_served(serving_root)
    entries = "".join(
        "  config {\n"
        f"    name: \"{name}\"\n"
        f"    base_path: \"{os.path.join(root, name)}\"\n"
        "    model_platform: \"tensorflow\"\n"
        f"{_policy(served.get(name, {}).get('pinned'))}"
        "  }\n" for name in sorted(_model_folders(serving_root)))
    return "model_config_list {\n" + entries + "}\n"


# Rewrites of models.config while what it is made from keeps changing (other pushes).
SETTLE_TRIES = 5


def write_serving_configs(serving_root: str) -> None:
    """(Re)writes models.config and batching.config in `serving_root`.

    models.config is made from served.json and the model folders, which another
    model's Pusher or a rollback may change between this read and this write. So
    it is made again after writing, and rewritten until both agree: the writer
    that changed the sources last also writes last, and no pin is lost.
    """
    path = os.path.join(serving_root, MODELS_CONFIG)
    text = models_config(serving_root)
    for _ in range(SETTLE_TRIES):
        files.write_text(path, text)
        again = models_config(serving_root)
        if again == text:
            break
        text = again
    files.write_text(os.path.join(serving_root, BATCHING_FILE), BATCHING_CONFIG)
