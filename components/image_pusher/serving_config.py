"""TF Serving config files written next to the pushed models.

`tensorflow_model_server --model_config_file=<serving root>/models.config
--enable_batching --batching_parameters_file=<serving root>/batching.config`
serves every model under the serving root as it is. The paths inside are
the ones of this machine; in a container, mount the serving root at the same
path or edit base_path.
"""
import os

from components.versions import is_local

# Conservative defaults for CPU serving of small images; tune per deployment.
BATCHING_CONFIG = """max_batch_size { value: 32 }
batch_timeout_micros { value: 2000 }
max_enqueued_batches { value: 100 }
num_batch_threads { value: 4 }
"""


def _model_folders(serving_root: str):
    if is_local(serving_root):
        return [n for n in os.listdir(serving_root)
                if os.path.isdir(os.path.join(serving_root, n)) and not n.startswith(".")]
    import tensorflow as tf
    return [n.rstrip("/") for n in tf.io.gfile.listdir(serving_root)
            if tf.io.gfile.isdir(os.path.join(serving_root, n)) and not n.startswith(".")]


def models_config(serving_root: str) -> str:
    """A ModelServerConfig (text proto) listing every model folder under `serving_root`."""
    root = os.path.abspath(serving_root) if is_local(serving_root) else serving_root
    entries = "".join(
        "  config {\n"
        f"    name: \"{name}\"\n"
        f"    base_path: \"{os.path.join(root, name)}\"\n"
        "    model_platform: \"tensorflow\"\n"
        "  }\n" for name in sorted(_model_folders(serving_root)))
    return "model_config_list {\n" + entries + "}\n"


def _write_atomically(path: str, text: str) -> None:
    if not is_local(path):  # a single object is replaced atomically by the store
        import tensorflow as tf
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(text)
        return
    temp = f"{path}.tmp"
    with open(temp, "w") as f:
        f.write(text)
    os.replace(temp, path)


def write_serving_configs(serving_root: str) -> None:
    """(Re)writes models.config and batching.config in `serving_root`."""
    _write_atomically(os.path.join(serving_root, "models.config"), models_config(serving_root))
    _write_atomically(os.path.join(serving_root, "batching.config"), BATCHING_CONFIG)
