"""Convert the blessed SavedModel into a TFLite folder, only if it passes the parity gate.

The folder (model.tflite with its metadata, labels.txt, model_info.json) is
written locally, then copied to the output (which may be an object store):
the Pusher publishes it as `<tflite_dir>/<version>/` beside the SavedModel.
"""
import json
import os
import shutil
import tempfile
from typing import Optional

from components.common.contract import (ASSETS_EXTRA, EVAL, LABELS_FILE, NORMALIZATION_FILE,
                                        TFLITE_INFO_FILE, TFLITE_MODEL_FILE, TRAIN, read_labels,
                                        split_dir)
from components.common.storage import files
from components.common.storage.tree_copy import copy_tree
from components.tflite_converter import conversion as tflite
from components.tflite_converter.settings import TFLiteSettings
from components.tflite_converter.tflite_metadata import embed_metadata

REPRESENTATIVE_IMAGES = 200


def convert_into(saved_model_dir: str, examples_uri: str, output_dir: str,
                 settings: TFLiteSettings, source: str) -> dict:
    """Converts, embeds the metadata, gates on eval accuracy, and writes the files that
    pass into `output_dir`; `source` is the metadata's version.

    Returns {"converted": whether the files were written, "parity": tflite.parity(...),
    "reason", "metadata" (embed_metadata's record)}; nothing is written on a refusal.
    """
    loaded = tflite.loaded_model(saved_model_dir)
    size, _, channels = tflite.input_shape(loaded)
    representative: Optional = None
    if settings.quantize == "int8":
        representative, _ = tflite.split_pixels(split_dir(examples_uri, TRAIN),
                                                size, channels, limit=REPRESENTATIVE_IMAGES)
    extra = os.path.join(saved_model_dir, ASSETS_EXTRA)
    names = read_labels(os.path.join(extra, LABELS_FILE))
    model, metadata = embed_metadata(
        tflite.convert(loaded, settings.quantize, representative), names,
        settings.model_name, source, settings.quantize, channels)
    # The gate runs the file that ships, metadata included.
    parity = tflite.parity(loaded, model, tflite.split_batches(
        split_dir(examples_uri, EVAL), size, channels), settings.parity_tolerance)
    if not parity["ok"]:
        return {"converted": False, "parity": parity, "metadata": metadata,
                "reason": f"TFLite accuracy {parity['tflite_accuracy']:.4f} is more than "
                          f"{settings.parity_tolerance} below the SavedModel's "
                          f"{parity['saved_model_accuracy']:.4f} on the eval split"}
    normalization = json.loads(files.read_text(os.path.join(extra, NORMALIZATION_FILE)))
    info = tflite.model_info([size, size, channels], normalization["mean"],
                             normalization["std"], names, settings.quantize, None, metadata)
    _write(model, extra, {**info, "parity": parity}, output_dir)
    return {"converted": True, "parity": parity, "metadata": metadata,
            "reason": "passed the parity gate"}


def _write(model: bytes, extra: str, info: dict, output_dir: str) -> None:
    """model.tflite, labels.txt and model_info.json into `output_dir`, through a local
    folder (the output may be an object store)."""
    staging = tempfile.mkdtemp(prefix="imagepipe-tflite-")  # always local
    try:
        with open(os.path.join(staging, TFLITE_MODEL_FILE), "wb") as f:
            f.write(model)
        with open(os.path.join(staging, LABELS_FILE), "wb") as f:
            f.write(files.read_bytes(os.path.join(extra, LABELS_FILE)))
        with open(os.path.join(staging, TFLITE_INFO_FILE), "w") as f:
            json.dump(info, f, indent=2, ensure_ascii=False)
        copy_tree(staging, output_dir, last=TFLITE_MODEL_FILE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
