"""TFLite Model Metadata in model.tflite: labels, input normalization, colour space, name.

With it a LiteRT / Task Library (or MediaPipe Tasks) image classifier reads
the class names from the .tflite file itself, no labels.txt beside it. The
writer is tflite-support's (installed with --no-deps: its protobuf<4 pin is
for its Task Library, which imagepipe never imports). Its native module
links libusb-1.0: without that system library the push goes on, unembedded,
and says why.
"""
import logging
import os
import tempfile
from typing import List, Tuple

from core.contract import LABELS_FILE, PIXELS_INPUT, PROBABILITIES

# The graph normalizes inside (conversion.py): it wants raw pixel values, so the
# metadata's NormalizationOptions are the identity, (x - 0) / 1, for every
# quantization (int8 keeps float32 inputs and outputs, see tflite.convert).
NORM_MEAN, NORM_STD = [0.0], [1.0]
LIBUSB_FIX = "apt-get install libusb-1.0-0"


def embed_metadata(model: bytes, labels: List[str], name: str, version: str, quantize: str,
                   channels: int, factor: int = 1) -> Tuple[bytes, dict]:
    """(the model with metadata packed in, {"embedded": True, ...}), or, when the writer
    cannot be loaded or refuses the model, (`model` unchanged, {"embedded": False,
    "reason"}): apps then read labels.txt, pushed beside it either way. `factor`: the
    input side over the model's, which the file shrinks inside (reduction.py)."""
    try:
        writer = _writer()
    except ImportError as e:
        return model, _not_embedded(_import_reason(e))
    try:
        packed = _populate(writer, model, labels, name, version, quantize, (channels, factor))
    except Exception as e:  # noqa: BLE001  (metadata is an extra; the model still ships)
        return model, _not_embedded(f"the metadata writer failed: {type(e).__name__}: {e}")
    return packed, {"embedded": True, "labels": LABELS_FILE, "norm_mean": NORM_MEAN,
                    "norm_std": NORM_STD, "color_space": _color_space_name(channels)}


def _writer():
    """tflite-support's metadata writer modules (not `tflite_support`: that loads the
    Task Library's protos, which protobuf 4 refuses)."""
    from tensorflow_lite_support.metadata import metadata_schema_py_generated as schema
    from tensorflow_lite_support.metadata import schema_py_generated as model_schema
    from tensorflow_lite_support.metadata.python.metadata_writers import (image_classifier,
                                                                          metadata_info,
                                                                          writer_utils)
    return schema, model_schema, image_classifier, metadata_info, writer_utils


def _import_reason(error: ImportError) -> str:
    text = str(error)
    if "libusb" in text:
        return (f"the system library libusb-1.0 is missing ({text}); install it "
                f"(`{LIBUSB_FIX}`) and push again to embed labels and normalization")
    return (f"tflite-support's metadata writer could not be imported ({text}); install it "
            "with `pip install --no-deps tflite-support==0.4.4`")


def _not_embedded(reason: str) -> dict:
    logging.warning("TFLite metadata not embedded: %s; labels.txt is pushed beside "
                    "model.tflite", reason)
    return {"embedded": False, "reason": reason}


def _color_space_name(channels: int) -> str:
    return {3: "RGB", 1: "GRAYSCALE"}.get(channels, "UNKNOWN")


def _input_words(factor: int) -> str:
    if factor > 1:
        return ("Pixels in [0, 255], decoded and resized to this size (bilinear is enough: "
                f"the model shrinks them {factor}x with antialiasing inside, as training "
                "resized); the normalization is inside the model")
    return ("Pixels in [0, 255], decoded and resized (antialiased) to the model's size; the "
            "normalization is inside the model")


def _populate(writer, model: bytes, labels: List[str], name: str, version: str,
              quantize: str, channels_and_factor: Tuple[int, int]) -> bytes:
    schema, model_schema, image_classifier, info, utils = writer
    channels, factor = channels_and_factor
    input_type = utils.get_input_tensor_types(model)[0]
    if input_type != model_schema.TensorType.FLOAT32:
        raise ValueError(f"input type {input_type} is not float32: identity normalization "
                         "would not describe it")
    color = getattr(schema.ColorSpaceType, _color_space_name(channels))
    size = "x".join(str(d) for d in utils.get_input_tensor_shape(model, 0)[1:3])
    with tempfile.TemporaryDirectory(prefix="imagepipe-labels-") as folder:
        labels_path = os.path.join(folder, LABELS_FILE)  # packed under its base name
        with open(labels_path, "w", encoding="utf-8") as f:
            f.write("".join(label + "\n" for label in labels))
        return bytes(image_classifier.MetadataWriter.create_from_metadata_info(
            bytearray(model),
            general_md=info.GeneralMd(
                name=name, version=str(version), author="imagepipe",
                description=f"Image classifier of {len(labels)} classes, {quantize} "
                            f"quantization; input {size} {_color_space_name(channels)} "
                            "pixels, float32 in [0, 255]"),
            input_md=info.InputImageTensorMd(
                name=PIXELS_INPUT, norm_mean=NORM_MEAN, norm_std=NORM_STD,
                description=_input_words(factor),
                color_space_type=color, tensor_type=input_type),
            output_md=info.ClassificationTensorMd(
                name=PROBABILITIES, description="Probability of each class, in labels.txt "
                                                "order",
                label_files=[info.LabelFileMd(file_path=labels_path)],
                tensor_type=utils.get_output_tensor_types(model)[0])).populate())
