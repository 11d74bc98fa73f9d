"""A push destination laid out as the Pusher writes it, local or in a bucket.

Shared by conftest.py's fixtures and bucket_rollback_steps.py, which runs
outside pytest (under scripts/with_gcs.sh), hence a module and not a fixture.
"""
import os

from core.storage import files
from components.image_pusher.versions import point_tflite, publish
from settings.config import PipelineConfig

VERSIONS = (100, 200, 300)  # oldest first
NO_TFLITE = (200,)  # its TFLite failed the parity gate


def push_versions(config: PipelineConfig, numbers, scratch: str) -> dict:
    """Versions as the Pusher publishes them into `config`'s output (a folder or a bucket):
    SavedModel with provenance (spans 1, 2, ...), and TFLite but for NO_TFLITE. `scratch`:
    a local folder for the model they are copied from. Returns {version: source URI}."""
    model = os.path.join(scratch, "trained")
    files.write_bytes(os.path.join(model, "saved_model.pb"), b"graph")
    files.makedirs(os.path.join(model, "variables"))
    uris = {}
    for index, number in enumerate(numbers):
        uris[number] = os.path.join(config.pipeline_root, "Trainer", "model", str(number))
        publish(model, config.serving_dir, number, source_uri=uris[number],
                record={"spans": [index + 1], "accuracy": 0.9 + index / 100})
        if number not in NO_TFLITE:
            files.write_bytes(os.path.join(config.tflite_dir, str(number), "model.tflite"),
                              b"tflite")
    return uris


def lay_out(config: PipelineConfig, scratch: str, numbers=VERSIONS) -> dict:
    """`push_versions`, then models.config and the TFLite pointer, as after the last push."""
    from components.image_pusher.serving_config import write_serving_configs
    uris = push_versions(config, numbers, scratch)
    write_serving_configs(os.path.dirname(config.serving_dir))
    point_tflite(config.tflite_dir, config.serving_dir)
    return uris
