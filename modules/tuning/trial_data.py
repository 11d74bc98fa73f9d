"""The images every trial trains and scores on: a sample of the train split, held in memory.

Decoded once through Transform's graph, as the Trainer decodes them, then
shared by every trial: a trial costs its training, not another decode. The
score comes from a holdout of the train images, never the eval split, which
stays the Evaluator's: a model chosen on the eval split would be blessed by
the figure it was chosen for.
"""
import dataclasses
import math

import numpy as np
import tensorflow as tf

from modules.augment import Augmentation, augment_batches
from modules.params import TrainerParams
from modules.tuning.settings import holdout_size


@dataclasses.dataclass
class TrialData:
    """Normalized images and one-hot labels: `fit` for training, `holdout` for the score."""

    fit_images: np.ndarray
    fit_labels: np.ndarray
    holdout_images: np.ndarray
    holdout_labels: np.ndarray

    @property
    def shape(self):
        return self.fit_images.shape[1:]

    @property
    def classes(self) -> int:
        return self.fit_labels.shape[1]


def load(dataset: tf.data.Dataset, count: int, batch: int, holdout_share: float) -> TrialData:
    """The first `count` (image, one-hot label) pairs of a shuffled, batched `dataset`."""
    images, labels = [], []
    for x, y in dataset.take(math.ceil(count / batch)):
        images.append(x.numpy())
        labels.append(y.numpy())
    images = np.concatenate(images)[:count]
    labels = np.concatenate(labels)[:count]
    held = holdout_size(len(images), holdout_share)
    return TrialData(images[held:], labels[held:], images[:held], labels[:held])


def fit_batches(data: TrialData, params: TrainerParams, batch: int, augment=None):
    """Endless shuffled, complete, augmented training batches of `data`."""
    batches = (tf.data.Dataset.from_tensor_slices((data.fit_images, data.fit_labels))
               .shuffle(len(data.fit_images), seed=params.seed, reshuffle_each_iteration=True)
               .repeat().batch(batch, drop_remainder=True))
    if augment is not None:
        return batches.map(lambda x, y: (augment(x), y)).prefetch(2)
    augmentation = Augmentation.of(params)
    return augment_batches(batches, augmentation, params.seed).prefetch(2)


def holdout_batches(data: TrialData, batch: int):
    return tf.data.Dataset.from_tensor_slices(
        (data.holdout_images, data.holdout_labels)).batch(batch)
