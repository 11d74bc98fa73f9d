"""Every record of a window as (predicted class, confidence, image features), or a BadRecord.

A record whose log holds the served model's answer keeps it; one that holds only
the image (a folder of images, a request whose response was not logged) is
scored here through the SavedModel's serving_image signature, in batches, by
`imagepipe predict --data`'s own handler (prediction/batch.py). Every
image is first decoded as ingestion decodes it (features.measure_image): that is
the ingestion's check, so a file that training would have refused is counted
bad with its reason instead of failing the model call.
"""
import dataclasses
from typing import Iterable, Iterator, List, Optional, Tuple, Union

import numpy as np

from components.image_example_gen.encoding.encode import BadImageError
from monitor.features import ImageFeatures, measure_image
from monitor.records import BadRecord, Item, Record
from prediction.batch_io import BATCH_PREDICT_MAX_BATCH


@dataclasses.dataclass
class Scored:
    """One record's answer and, when the record held an image, its features."""

    id: str
    predicted: int  # the class id, in the model's labels order
    confidence: float  # the top probability
    features: Optional[ImageFeatures]


Outcome = Union[Scored, BadRecord]


def answer_of(record: Record, classes: int) -> Optional[Tuple[int, float]]:
    """(predicted, confidence) from what the log holds, None if it holds no answer.

    Raises ValueError when the answer does not fit a model of `classes` classes.
    """
    if record.probabilities is not None:
        probabilities = np.asarray(record.probabilities, dtype=np.float64).reshape(-1)
        if probabilities.size != classes:
            raise ValueError(f"the logged answer has {probabilities.size} probabilities, "
                             f"the model {classes} classes")
        top = int(np.argmax(probabilities))
        return top, float(probabilities[top])
    if record.predicted is None:
        return None
    if not 0 <= record.predicted < classes:
        raise ValueError(f"the logged class id {record.predicted} is not one of the "
                         f"model's {classes} classes")
    return int(record.predicted), float(record.confidence if record.confidence is not None
                                        else np.nan)


class _Model:
    """The served SavedModel, loaded at the first batch: a window whose log holds every
    answer never loads TensorFlow's model at all."""

    def __init__(self, model_dir: str):
        self._dir, self._handler, self._model = model_dir, None, None

    def run(self, images: List[bytes]) -> list:
        """Probabilities per image, or the reason the model could not decode it."""
        if self._handler is None:
            from prediction.batch import ServingImageHandler  # heavy: Beam, TF
            self._handler = ServingImageHandler(self._dir)
            self._model = self._handler.load_model()
        return self._handler.run_inference(images, self._model)


def _scored(model: _Model, pending: List[Tuple[Record, Optional[ImageFeatures]]]
            ) -> Iterator[Outcome]:
    if not pending:
        return
    results = model.run([record.image for record, _ in pending])
    for (record, features), result in zip(pending, results):
        if isinstance(result, str):
            yield BadRecord(record.id, result)
            continue
        top = int(np.argmax(result))
        yield Scored(record.id, top, float(result[top]), features)


def _checked(record: Record, classes: int, max_pixels: int):
    """(answer or None, features or None), or a BadRecord saying what is wrong."""
    try:
        answer = answer_of(record, classes)
        features = measure_image(record.image, max_pixels) if record.image else None
    except (ValueError, BadImageError) as e:
        return BadRecord(record.id, str(e))
    if answer is None and features is None:
        return BadRecord(record.id, "neither an image nor an answer: nothing to measure")
    return answer, features


def score_window(items: Iterable[Item], model_dir: str, classes: int, max_pixels: int,
                 batch_size: int = BATCH_PREDICT_MAX_BATCH) -> Iterator[Outcome]:
    """Each item of a window as a Scored record or a BadRecord, in order within a batch.

    Args:
      items: what a reader yields (monitor/readers).
      model_dir: the SavedModel version folder that scores records without an answer.
      classes: how many classes the model has (its labels).
      max_pixels: images with more pixels are refused, as ingestion refuses them.
      batch_size: images per call of the serving_image signature.
    """
    model, pending = _Model(model_dir), []
    for item in items:
        checked = item if isinstance(item, BadRecord) else _checked(item, classes, max_pixels)
        if isinstance(checked, BadRecord):
            yield checked
            continue
        answer, features = checked
        if answer is not None:
            yield Scored(item.id, answer[0], answer[1], features)
            continue
        pending.append((item, features))
        if len(pending) >= batch_size:
            yield from _scored(model, pending)
            pending = []
    yield from _scored(model, pending)
