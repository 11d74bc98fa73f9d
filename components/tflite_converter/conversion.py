"""Convert the blessed SavedModel to TFLite, and check what a client gets from it (the gate).

The conversion starts from the `serving_tensor` signature: float32 pixels in
[0, 255], because TFLite has no image decoders. Where the training images are
larger than the model's side, the file takes `factor` times that side and shrinks
it inside with Transform's antialiasing (reduction.py), so that a client that
stretches a photo bilinearly, as the TFLite Task Library does, sees what training
saw. The per-channel normalization is inside the file too.

The parity gate scores the file on the eval split's files the way such a client
reads them (client_inputs.py), against the SavedModel's accuracy on Transform's
pixels, the accuracy the run reports.
"""
import contextlib
import os
import sys
import tempfile
import threading
from typing import Dict, Iterable, Iterator, List, Optional

import numpy as np
import tensorflow as tf

from core import limits
from core.contract import SERVING_TENSOR
from core.images import pixel_decoder
from components.tflite_converter.client_inputs import Batch, client_decoder
from components.tflite_converter.reduction import reduce_pixels
from components.tflite_converter.settings import check_quantize

SIGNATURE = SERVING_TENSOR


def loaded_model(saved_model):
    """A SavedModel folder loaded, or `saved_model` itself if it is loaded already: a
    conversion and its gate load the model once (each load re-traces its functions)."""
    return tf.saved_model.load(saved_model) if isinstance(saved_model, str) else saved_model


def _numeric_signature(saved_model_dir, export_dir: str, factor: int = 1) -> None:
    """Re-saves the SavedModel with `serving_tensor` returning probabilities only, taking
    pixels `factor` times the model's side (reduction.py) when `factor` > 1.

    Why: the class_name output is a gather over strings, a dynamic-sized tensor,
    and the TFLite interpreter then refuses XNNPACK for the whole graph ("a
    delegate that only supports static-sized tensors ..."), and int8 inference
    ran on the slower builtin kernels (docs/performance.md). class_id (int64,
    [batch]) goes too: LiteRT's Task Library and MediaPipe image classifiers
    take every output for a [1 x classes] float score tensor and refuse others.
    Apps take the argmax and read the name from the labels packed in the file
    (tflite_metadata.py) or from labels.txt beside it.
    """
    loaded = loaded_model(saved_model_dir)
    serve = loaded.signatures[SIGNATURE]
    _, size, _, channels = serve.structured_input_signature[1]["pixels"].shape.as_list()
    side = size * factor

    @tf.function(input_signature=[tf.TensorSpec([None, side, side, channels], tf.float32,
                                                name="pixels")])
    def numeric(pixels):
        outputs = serve(pixels=reduce_pixels(pixels, factor))
        return {"probabilities": outputs["probabilities"]}

    tf.saved_model.save(loaded, export_dir, signatures={SIGNATURE: numeric})


_STDERR_SWAP = threading.Lock()  # fd 2 is process-wide: one swap at a time


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[None]:
    """In quiet mode, holds back what the converter's C++ prints on fd 2.

    The MLIR converter writes absl warnings and a "fully_quantize: ..." line
    straight to the process's stderr, past Python's logging. Quiet mode is
    TF_CPP_MIN_LOG_LEVEL=3 (set by the CLI unless --verbose); the captured
    text is printed after all if the conversion fails, so errors stay visible.
    """
    quiet = os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "3"
    if not quiet or not _STDERR_SWAP.acquire(blocking=False):
        yield  # verbose, or another thread holds fd 2 already: leave it alone
        return
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all (a daemon): nothing to hold back
        _STDERR_SWAP.release()
        yield
        return
    sys.stderr.flush()
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            captured.seek(0)
            sys.stderr.write(captured.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            _STDERR_SWAP.release()


def convert(saved_model_dir, quantize: str, representative: Optional[np.ndarray] = None,
            factor: int = 1) -> bytes:
    """The .tflite bytes for `quantize`: none, dynamic (range), float16 or int8.

    int8 is full-integer quantization of weights and activations, calibrated
    on `representative` pixels (from the train split, at the file's input side);
    the input and output stay float32, so callers feed the same pixels whatever
    the quantization. `factor`: the file's input side over the model's (reduction.py).
    """
    check_quantize(quantize)
    if quantize == "int8" and (representative is None or not len(representative)):
        raise ValueError("int8 quantization needs representative images")
    with tempfile.TemporaryDirectory(prefix="imagepipe-tflite-") as numeric_dir, \
            _native_stderr_captured():
        _numeric_signature(saved_model_dir, numeric_dir, factor)
        converter = tf.lite.TFLiteConverter.from_saved_model(numeric_dir,
                                                             signature_keys=[SIGNATURE])
        if quantize != "none":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantize == "float16":
            converter.target_spec.supported_types = [tf.float16]
        if quantize == "int8":
            converter.representative_dataset = lambda: (
                {"pixels": image[None]} for image in representative)
            # Builtins besides INT8: an op without an int8 kernel stays float instead
            # of failing the conversion (argmax had none while class_id was an output).
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8,
                                                   tf.lite.OpsSet.TFLITE_BUILTINS]
        return converter.convert()


def input_shape(saved_model_dir) -> List[int]:
    """[size, size, channels] of the SavedModel's serving_tensor signature."""
    signature = loaded_model(saved_model_dir).signatures[SIGNATURE]
    return signature.structured_input_signature[1]["pixels"].shape.as_list()[1:]


class Runner:
    """Runs a .tflite model's `serving_tensor` on float pixels, as an app would.

    Why not `Interpreter.get_signature_runner`: it resizes the input and
    re-allocates tensors on every call, which slowed single-image calls
    (docs/performance.md). Here the interpreter is resized
    only when the batch shape changes. Threads: every core this process may
    use, as TensorFlow does for the SavedModel (the interpreter's default is one).
    """

    def __init__(self, model: bytes = None, model_path: str = None):
        self._interpreter = tf.lite.Interpreter(model_content=model, model_path=model_path,
                                                num_threads=len(os.sched_getaffinity(0)))
        signature = self._interpreter.get_signature_list()[SIGNATURE]
        runner = self._interpreter.get_signature_runner(SIGNATURE)
        details = runner.get_input_details()["pixels"]
        self._input = details["index"]
        self.input_shape = [int(d) for d in details["shape"][1:]]  # [size, size, channels]
        outputs = runner.get_output_details()
        self._outputs = {name: outputs[name]["index"] for name in signature["outputs"]}
        self._shape = None

    def __call__(self, pixels: np.ndarray) -> Dict[str, np.ndarray]:
        if pixels.shape != self._shape:
            # The first allocation prints "INFO: Created TensorFlow Lite XNNPACK delegate".
            with _native_stderr_captured():
                self._interpreter.resize_tensor_input(self._input, list(pixels.shape))
                self._interpreter.allocate_tensors()
            self._shape = pixels.shape
        self._interpreter.set_tensor(self._input, pixels)
        self._interpreter.invoke()
        return {name: self._interpreter.get_tensor(index)
                for name, index in self._outputs.items()}


def tflite_probabilities(model: bytes, pixels: np.ndarray, batch: int = 64) -> np.ndarray:
    """Runs the .tflite model over `pixels`, `batch` images at a time."""
    runner = Runner(model)
    return np.concatenate([runner(pixels[i:i + batch])["probabilities"]
                           for i in range(0, len(pixels), batch)])


def saved_model_probabilities(saved_model_dir: str, pixels: np.ndarray,
                              batch: int = 64) -> np.ndarray:
    """The SavedModel's `serving_tensor` over the same pixels."""
    serve = tf.saved_model.load(saved_model_dir).signatures[SIGNATURE]
    return np.concatenate([serve(pixels=tf.constant(pixels[i:i + batch]))["probabilities"]
                           .numpy() for i in range(0, len(pixels), batch)])


def client_path(side: int, factor: int) -> str:
    """What the gate's TFLite accuracy measures, in words for the record."""
    inside = (f"; the file shrinks it {factor}x with antialiasing to the model's side"
              if factor > 1 else "")
    return (f"each eval file decoded whole and stretched to {side}x{side} with bilinear "
            f"sampling, no antialiasing, as the TFLite Task Library does{inside}")


def parity(saved_model_dir, model: bytes, batches: Iterable[Batch], tolerance: float,
           known: Optional[List[np.ndarray]] = None) -> Dict[str, object]:
    """The SavedModel's accuracy on Transform's pixels and the file's on a client's, from
    the same (encoded images, labels) batches; `ok` if the file loses <= `tolerance`.

    The file is judged on what a phone gets: each image decoded and resized as the Task
    Library does from the file (client_inputs.client_decoder), not on Transform's pixels,
    which no client computes. Streams: one batch is in memory at a time; holding the
    whole eval split as float32 made the peak grow with the data (docs/performance.md).
    `known`: a list that the first call on these batches fills with the SavedModel's
    classes per batch, and later calls (the fallback conversions) read instead.
    """
    serve = None if known else loaded_model(saved_model_dir).signatures[SIGNATURE]
    known = [] if known is None else known
    runner = Runner(model)
    side, _, channels = runner.input_shape
    decode = client_decoder(side, channels)
    right, count = {"saved_model": 0, "tflite": 0}, 0
    for index, (encoded, labels) in enumerate(batches):
        encoded = tf.constant(encoded, tf.string)
        if serve is not None:
            known.append(_saved_model_classes(serve, encoded))
        right["saved_model"] += int(np.sum(known[index] == labels))
        pixels = decode(encoded).numpy()
        right["tflite"] += int(np.sum(runner(pixels)["probabilities"].argmax(-1) == labels))
        count += len(labels)
    return parity_verdict(right["saved_model"], right["tflite"], count, tolerance)


def _saved_model_classes(serve, encoded: tf.Tensor) -> np.ndarray:
    """The SavedModel's classes of encoded images, decoded as Transform decodes them."""
    _, size, _, channels = serve.structured_input_signature[1]["pixels"].shape.as_list()
    pixels = pixel_decoder(size, channels)(encoded)
    return serve(pixels=pixels)["probabilities"].numpy().argmax(-1)


def parity_verdict(saved_model_right: int, tflite_right: int, count: int,
                   tolerance: float) -> Dict[str, object]:
    """parity()'s record from the counts: the drop is (k_saved - k_tflite)/n exactly, held
    to the tolerance as typed, and a drop equal to it passes (core/limits.py)."""
    if not count:
        return {"saved_model_accuracy": float("nan"), "tflite_accuracy": float("nan"),
                "drop": float("nan"), "examples": 0, "tolerance": tolerance, "ok": False}
    drop = limits.ratio(saved_model_right - tflite_right, count)
    return {"saved_model_accuracy": saved_model_right / count,
            "tflite_accuracy": tflite_right / count, "drop": float(drop), "examples": count,
            "tolerance": tolerance, "ok": not limits.exceeds(drop, tolerance)}


def preprocessing_words(factor: int) -> str:
    """How an app prepares an image for the file (model_info.json, the metadata)."""
    if factor > 1:
        return ("decode, convert to the channels above, resize to the shape above (bilinear "
                f"is enough: the model shrinks it {factor}x with antialiasing inside, as "
                "training resized); normalization ((x / 255 - mean) / std) is inside the "
                "model")
    return ("decode, convert to the channels above, resize to the shape above (antialiased, "
            "as training resized); normalization ((x / 255 - mean) / std) is inside the model")


def model_info(pixels_shape: List[int], mean: List[float], std: List[float],
               labels: List[str], quantize: str, version: Optional[int],
               metadata: dict, factor: int = 1) -> dict:
    """What an app needs besides the .tflite file (written as model_info.json);
    `pixels_shape` is the file's input, `factor` times the model's side (reduction.py);
    `metadata` says whether the labels are packed in the file (tflite_metadata.py)."""
    return {"input": {"name": "pixels", "shape": pixels_shape, "dtype": "float32",
                      "range": [0, 255], "preprocessing": preprocessing_words(factor),
                      "reduction": factor},
            "normalization": {"mean": mean, "std": std},
            "outputs": ["probabilities"],
            "labels": labels, "quantization": quantize, "source_version": version,
            "metadata": metadata}
