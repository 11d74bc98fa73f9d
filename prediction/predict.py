"""`imagepipe predict`: classify image files with a pushed SavedModel or TFLite file.

    imagepipe predict --model outputs/serving/imagepipe IMAGE...
    imagepipe predict --model outputs/serving/imagepipe --log requests.tfrecord IMAGE...

The model is a SavedModel version folder, a serving base folder (the version
TF Serving serves: the one a rollback pinned, else the latest), or a `.tflite`
file with labels.txt beside it. Images go through the same preprocessing as in
training: the SavedModel's `serving_image` signature embeds the Transform graph;
for TFLite, the images are decoded and resized by Transform's own functions
(modules/preprocessing.py) and the normalization is inside the file.
"""
import os
from typing import List, Optional, Tuple

import numpy as np

from core.contract import ASSETS_EXTRA
from core.storage import files
from components.image_pusher.versions import served_version
from core.errors import UsageError


def resolve_model(path: str) -> Tuple[str, str]:
    """("saved_model" or "tflite", the path to load), or UsageError naming --model."""
    if path.endswith(".tflite") and files.isfile(path):
        return "tflite", path
    if files.isfile(os.path.join(path, "saved_model.pb")):
        return "saved_model", path
    served = served_version(path)
    if served is not None:
        return "saved_model", os.path.join(path, str(served))
    raise UsageError(f"--model {path}: not a SavedModel folder, a serving base folder with "
                     "versions, or a .tflite file")


class Predictor:
    """probabilities(image bytes) and the labels, for either kind of model."""

    def __init__(self, model: str):
        import tensorflow as tf  # heavy: loaded only when predicting

        from core.contract import LABELS_FILE, SERVING_IMAGE, read_labels
        self.kind, self.path = resolve_model(model)
        if self.kind == "saved_model":
            self._serve = tf.saved_model.load(self.path).signatures[SERVING_IMAGE]
            self.labels = read_labels(os.path.join(self.path, ASSETS_EXTRA, LABELS_FILE))
        else:
            from components.tflite_converter.conversion import Runner
            self._runner = Runner(model_path=self.path)
            self._size, _, self._channels = self._runner.input_shape
            self.labels = read_labels(os.path.join(os.path.dirname(self.path), LABELS_FILE))

    def probabilities(self, image: bytes) -> np.ndarray:
        """The class probabilities of one encoded image; raises if it cannot be decoded."""
        import tensorflow as tf

        from core.contract import IMAGE_BYTES_INPUT, PROBABILITIES
        if self.kind == "saved_model":
            return self._serve(**{IMAGE_BYTES_INPUT: tf.constant([image])})[
                PROBABILITIES].numpy()[0]
        from core.images import decode_images
        pixels = decode_images(tf.constant([image]), int(self._size), int(self._channels))
        return self._runner((pixels * 255.0).numpy())[PROBABILITIES][0]


def top_k(probabilities: np.ndarray, labels: List[str], k: int) -> List[Tuple[str, float]]:
    """The k most probable (label, probability) pairs, best first."""
    order = np.argsort(-probabilities)[:k]
    return [(labels[i], float(probabilities[i])) for i in order]


def predict_files(model: str, images: List[str], k: int,
                  log: Optional[str] = None) -> Tuple[List[str], int]:
    """One line per image, 'path: label (p), ...' or 'path: error: ...'; and the error count.

    `log`: also write a PredictionLog TFRecord there (`--log`), one predict_log per
    classified image, as TF Serving's request logging writes them: what `imagepipe
    monitor --format prediction_log` reads.
    """
    from components.image_example_gen.encoding.encode import BadImageError, decode_fully
    from components.image_example_gen.encoding.shard_writer import frame  # one TFRecord
    from settings.config import DEFAULT_MAX_PIXELS
    predictor = Predictor(model)
    writer = None if log is None else _open_log(log)
    lines, errors = [], 0
    try:
        for path in images:
            try:
                data = files.read_bytes(path)
                # the ingestion's check: a clear reason, not a graph error
                decode_fully(data, DEFAULT_MAX_PIXELS)
                scores = predictor.probabilities(data)
            except (OSError, BadImageError) as e:
                errors += 1
                lines.append(f"{path}: error: {e.strerror if isinstance(e, OSError) else e}")
                continue
            if writer is not None:
                writer.write(frame(prediction_log(predictor, data, scores).SerializeToString()))
            lines.append(f"{path}: " + ", ".join(
                f"{label} ({p:.3f})" for label, p in top_k(scores, predictor.labels, k)))
    finally:
        if writer is not None:
            writer.close()
    return lines, errors


def _open_log(path: str):
    """The --log file, written through core/storage (local or gs://)."""
    files.makedirs(os.path.dirname(path))
    return files.open_file(path, "wb")


def prediction_log(predictor: Predictor, image: bytes, scores: np.ndarray):
    """A PredictionLog of one serving_image request: the model's name and version (its
    serving folder's, TF Serving's layout `<name>/<version>`), the image, the answer."""
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_log_pb2

    from core.contract import IMAGE_BYTES_INPUT, PROBABILITIES, SERVING_IMAGE
    log = prediction_log_pb2.PredictionLog()
    request, response = log.predict_log.request, log.predict_log.response
    folder = predictor.path if predictor.kind == "saved_model" else os.path.dirname(
        predictor.path)
    version = os.path.basename(folder.rstrip("/"))
    for spec in (request.model_spec, response.model_spec):
        spec.name = os.path.basename(os.path.dirname(folder.rstrip("/")) if version.isdigit()
                                     else folder.rstrip("/"))
        if version.isdigit():
            spec.version.value = int(version)
        if predictor.kind == "saved_model":
            spec.signature_name = SERVING_IMAGE
    request.inputs[IMAGE_BYTES_INPUT].CopyFrom(tf.make_tensor_proto([image], tf.string))
    response.outputs[PROBABILITIES].CopyFrom(
        tf.make_tensor_proto(np.asarray(scores, np.float32)[None, :]))
    return log
