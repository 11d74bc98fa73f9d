"""Convert the blessed SavedModel into a TFLite folder, only if it passes the parity gate.

The folder (model.tflite with its metadata, labels.txt, model_info.json) is
written locally, then copied to the output (which may be an object store):
the Pusher publishes it as `<tflite_dir>/<version>/` beside the SavedModel.
"""
import json
import os
import shutil
import tempfile
from typing import List, Optional, Tuple

from core.contract import (ASSETS_EXTRA, EVAL, LABELS_FILE, NORMALIZATION_FILE,
                           TFLITE_INFO_FILE, TFLITE_MODEL_FILE, TRAIN,
                           read_labels, split_dir)
from core.storage import files
from core.storage.tree_copy import copy_tree
from components.tflite_converter import conversion as tflite
from components.tflite_converter.client_inputs import (client_decoder, decoded_split,
                                                       long_sides, split_batches)
from components.tflite_converter.reduction import reduction_factor
from components.tflite_converter.settings import TFLiteSettings
from components.tflite_converter.tflite_metadata import embed_metadata

REPRESENTATIVE_IMAGES = 200
# Client pixels held at once by the gate: 64 images at the model's side, fewer at a larger
# input side (a 512-px input at 64 images a batch would hold 200 MB of floats).
GATE_PIXELS = 64 * 128 * 128
# The verdict's reason for a file that passed; "<conversion> TFLITE_PASSED where ..." when
# the one asked for lost too much and a heavier one shipped.
TFLITE_PASSED = "passed the parity gate"

# Lightest first. Where a conversion loses more than the tolerance on the eval split, the
# next one is tried, so that a run still ships a TFLite file and says which (a flowers
# run's int8 once failed the gate by little, and that run shipped none: docs/serving.md).
LIGHTEST_FIRST = ("int8", "dynamic", "float16", "none")


def fallbacks(quantize: str) -> Tuple[str, ...]:
    """The conversion asked for, then the heavier ones to fall back on."""
    return LIGHTEST_FIRST[LIGHTEST_FIRST.index(quantize):]


def convert_into(saved_model_dir: str, examples_uri: str, output_dir: str,
                 settings: TFLiteSettings, source: str) -> dict:
    """Converts, embeds the metadata, gates on the client path's eval accuracy, and writes
    the first conversion of fallbacks(settings.quantize) that passes into `output_dir`;
    `source` is the metadata's version.

    The file's input side is reduction_factor(the train images' long sides) times the
    model's. Returns {"converted": whether the files were written, "quantize": the
    conversion written (else the last tried), "tried": each one's quantize, accuracy and
    drop, "parity": tflite.parity(...) of the last with its "client_path", "reason",
    "metadata" (embed_metadata's record)}; nothing is written when none passes.
    """
    loaded = tflite.loaded_model(saved_model_dir)
    extra = os.path.join(saved_model_dir, ASSETS_EXTRA)
    names = read_labels(os.path.join(extra, LABELS_FILE))
    size, _, _ = tflite.input_shape(loaded)
    factor = reduction_factor(long_sides(split_dir(examples_uri, TRAIN)), size)
    tried, known = [], []  # known: the SavedModel's classes, predicted once for all attempts
    for quantize in fallbacks(settings.quantize):
        model, metadata, parity = _attempt(loaded, examples_uri, settings, quantize, names,
                                           (source, factor), known)
        tried.append({"quantize": quantize, "tflite_accuracy": parity["tflite_accuracy"],
                      "drop": parity["drop"], "ok": parity["ok"]})
        if parity["ok"]:
            break
    verdict = {"converted": parity["ok"], "quantize": quantize, "tried": tried,
               "parity": parity, "metadata": metadata,
               "reason": _reason(tried, settings, parity["saved_model_accuracy"])}
    if parity["ok"]:
        _, _, channels = tflite.input_shape(loaded)
        normalization = json.loads(files.read_text(os.path.join(extra, NORMALIZATION_FILE)))
        info = tflite.model_info([size * factor, size * factor, channels],
                                 normalization["mean"], normalization["std"], names,
                                 quantize, None, metadata, factor)
        _write(model, extra, {**info, "parity": parity, "tried": tried}, output_dir)
    return verdict


def _attempt(loaded, examples_uri: str, settings: TFLiteSettings, quantize: str,
             names: List[str], source_and_factor: Tuple[str, int], known: List):
    """(the file, its metadata record, its parity) for one conversion."""
    source, factor = source_and_factor
    size, _, channels = tflite.input_shape(loaded)
    side = size * factor
    representative: Optional = None
    if quantize == "int8":  # calibrated on what the file will be fed: a client's pixels
        representative, _ = decoded_split(split_dir(examples_uri, TRAIN),
                                          client_decoder(side, channels),
                                          limit=REPRESENTATIVE_IMAGES)
    model, metadata = embed_metadata(
        tflite.convert(loaded, quantize, representative, factor), names,
        settings.model_name, source, quantize, channels, factor)
    # The gate runs the file that ships, metadata included, on the eval split's files.
    batch = min(64, max(4, GATE_PIXELS // side ** 2))
    batches = split_batches(split_dir(examples_uri, EVAL), batch)
    parity = tflite.parity(loaded, model, batches, settings.parity_tolerance, known)
    return model, metadata, {**parity, "client_path": tflite.client_path(side, factor)}


def _reason(tried: List[dict], settings: TFLiteSettings, saved_model_accuracy: float) -> str:
    """Why the file is the one written, or why none is."""
    def lost(t):
        return (f"{t['quantize']} lost {t['drop']:.4f} of eval accuracy "
                f"({t['tflite_accuracy']:.4f})")
    failed = [t for t in tried if not t["ok"]]  # conversion.parity judged each exactly
    if len(failed) == len(tried):
        return (f"TFLite accuracy {tried[-1]['tflite_accuracy']:.4f} on the eval files, read "
                f"as a client reads them, is more than {settings.parity_tolerance} below the "
                f"SavedModel's {saved_model_accuracy:.4f}"
                + (f" ({'; '.join(lost(t) for t in failed)})" if len(tried) > 1 else ""))
    if not failed:
        return TFLITE_PASSED
    return (f"{tried[-1]['quantize']} {TFLITE_PASSED} where "
            f"{'; '.join(lost(t) for t in failed)}, more than {settings.parity_tolerance}")


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
