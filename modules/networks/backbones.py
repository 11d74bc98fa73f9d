"""Keras Applications backbones: pretrained features, a new head, two-phase fine-tuning.

The model takes what every imagepipe model takes (Transform's normalized
pixels) and turns them, inside the graph, into what the backbone was trained
on: pixels back to [0, 255] with Transform's own mean and std, gray repeated
to RGB, then the backbone's value range (or BGR order). Serving signatures
and TFLite therefore need nothing backbone-specific.

    image -> ImageSummary -> BackboneInput -> backbone (training=False) ->
    global average pooling -> dropout -> softmax -> HistogramSummary

A backbone with weights runs with training=False, so its batch norm stays
in inference mode, frozen or not (Keras' transfer-learning guide); one
without weights trains from scratch, batch norm included.
"""
import os
import shutil
import tempfile
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf
import tf_keras as keras

from core.storage import files
from modules.network_registry import Backbone, backbone as registered
from modules.networks.photo import BN_MOMENTUM
from modules.networks.summaries import IMAGE_SUMMARY, ImageSummary, classifier
from modules.networks.space import Architecture

IMAGENET = "imagenet"
DROPOUT = 0.2
# EfficientNet's ImageNet statistics (tf_keras applications/efficientnet.py).
_EFFICIENTNET_STD = np.array([0.229, 0.224, 0.225], np.float32)


class WeightsError(ValueError):
    """A --weights file that is missing, unreadable or for another network."""


class BackboneInput(keras.layers.Layer):
    """Normalized pixels -> the backbone's input: one per-channel affine map (and BGR).

    pixels255 = (x * std + mean) * 255 undoes Transform's normalization; the
    backbone's own scale and offset are folded into the same multiply-add.
    """

    def __init__(self, mean, std, scale: float, offset, bgr: bool, **kwargs):
        super().__init__(**kwargs)
        mean, std = np.ravel(mean).astype(np.float32), np.ravel(std).astype(np.float32)
        if mean.size == 1:  # grayscale: repeated to RGB below
            mean, std = np.repeat(mean, 3), np.repeat(std, 3)
        self._bgr = bgr
        order = slice(None, None, -1) if bgr else slice(None)
        self._gain = (std * 255.0 * scale)[order]
        self._bias = (mean * 255.0 * scale)[order] + np.asarray(offset, np.float32)
        self._config = {"mean": mean.tolist(), "std": std.tolist(), "scale": scale,
                        "offset": list(offset), "bgr": bgr}

    def call(self, images):
        images = tf.cast(images, tf.float32)
        if images.shape[-1] == 1:
            images = tf.repeat(images, 3, axis=-1)
        elif self._bgr:
            images = images[..., ::-1]
        return tf.cast(images * self._gain + self._bias, self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._config}


def _application(backbone: Backbone, side: int, weights: Optional[str]) -> keras.Model:
    cls = getattr(keras.applications, backbone.build)
    return cls(include_top=False, weights=weights, input_shape=(side, side, 3))


def _fold_efficientnet_std(network: keras.Model) -> None:
    """Gives a weights=None EfficientNet the value scale of Keras' ImageNet graph.

    With weights='imagenet', Keras adds a multiply by 1/sqrt(std) after its
    Normalization layer (tf_keras efficientnet.py, tensorflow#49930); the
    weights=None graph, which --weights PATH builds, has no such op. Its
    variance, std**2 in ImageNet weights, becomes std**3: the same outputs.
    A file saved after folding holds std**3 and is left as it is.
    """
    layer = next(l for l in network.layers if isinstance(l, keras.layers.Normalization))
    mean, variance, count = layer.get_weights()
    imagenet_variance = _EFFICIENTNET_STD ** 2
    if np.allclose(np.ravel(variance), imagenet_variance, rtol=1e-3):
        layer.set_weights([mean, variance * _EFFICIENTNET_STD.reshape(variance.shape), count])


def _weights_file(path: str) -> str:
    """A local copy of `path` if it is remote (gs://): h5py reads local files only."""
    if not files.is_remote(path):
        return path
    local = os.path.join(tempfile.mkdtemp(prefix="imagepipe-weights-"), os.path.basename(path))
    files.copy(path, local)
    return local


def load_weights_file(network: keras.Model, path: str, backbone: str) -> None:
    """Loads a Keras weights file (.h5, or a TF checkpoint prefix) into `network`.

    Raises WeightsError naming the file and the network it should be for.
    """
    expected = (f"a Keras weights file of {backbone} without its top (include_top=False), "
                f"such as keras.applications.{registered(backbone).build}(include_top=False, "
                f"weights=None).save_weights('{os.path.basename(path)}')")
    if not (files.exists(path) or files.exists(path + ".index")):
        raise WeightsError(f"--weights {path}: no such file; expected {expected}")
    local = _weights_file(path)
    try:
        status = network.load_weights(local)
        if status is not None:  # TF checkpoint format: loading is lazy and lenient
            status.assert_existing_objects_matched()
    except (ValueError, OSError, AssertionError, tf.errors.OpError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise WeightsError(f"--weights {path}: could not be loaded into {backbone} "
                           f"({first}); expected {expected}") from None
    finally:
        if local != path:
            shutil.rmtree(os.path.dirname(local), ignore_errors=True)


def build_network(name: str, side: int, weights: Optional[str]) -> keras.Model:
    """The backbone without its top, with `weights`: 'imagenet', a file path, or None.

    'imagenet' goes through Keras (its download and its cache, ~/.keras/models).
    Raises WeightsError for a bad file, and for ImageNet weights Keras cannot fetch.
    """
    backbone = registered(name)
    if weights != IMAGENET:
        network = _application(backbone, side, None)
        if weights:
            load_weights_file(network, weights, name)
    else:
        try:
            network = _application(backbone, side, IMAGENET)
        except Exception as e:  # noqa: BLE001  (urllib, ssl, socket, hash errors alike)
            raise WeightsError(
                f"--weights imagenet: Keras could not fetch the ImageNet weights of {name} "
                f"({type(e).__name__}: {e}). Without a network, save them where one is "
                "available and pass the file: --weights PATH") from None
        if name == "efficientnet_b0":  # rebuilt as the weights=None graph, see the fold
            imagenet = network
            network = _application(backbone, side, None)
            network.set_weights(imagenet.get_weights())
    if name == "efficientnet_b0":
        _fold_efficientnet_std(network)
    return network


def build_backbone_model(name: str, input_shape: Sequence[int], num_classes: int,
                         weights: Optional[str], mean, std,
                         arch: Architecture = Architecture()) -> keras.Model:
    """The classifier: the backbone between imagepipe's input mapping and a new head.

    `mean` and `std` are Transform's per-channel statistics for pixels in
    [0, 1] (modules/signatures.tft_normalization). The backbone starts frozen
    when it has weights; `unfreeze_top` opens it for phase 2. A search's
    `arch` sets the head's dropout.
    """
    side, channels = int(input_shape[0]), int(input_shape[-1])
    backbone = registered(name)
    network = build_network(name, side, weights)
    network.trainable = not weights
    inputs = keras.Input(shape=(side, side, channels), name="image")
    x = ImageSummary(name=IMAGE_SUMMARY)(inputs)
    x = BackboneInput(mean, std, backbone.scale, backbone.offset, backbone.bgr,
                      name="backbone_input")(x)
    if weights:
        x = network(x, training=False)  # batch norm keeps the statistics it came with
    else:
        _train_batch_norm_from_scratch(network)
        x = network(x)  # training mode in fit: batch norm learns its statistics
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(DROPOUT if arch.dropout is None else arch.dropout)(x)
    return keras.Model(inputs, classifier(x, num_classes), name=f"{name}_classifier")


def _train_batch_norm_from_scratch(network: keras.Model) -> None:
    """Batch norm momentum 0.9, as the photo model's, for a backbone without weights.

    Keras Applications use 0.999 (MobileNetV2) or 0.99: from random init,
    a few hundred steps leave the moving statistics near their initial 0
    and 1, and the inference-mode network predicts one class (measured:
    docs/performance.md, docs/models.md).
    """
    for layer in network.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.momentum = BN_MOMENTUM


def backbone_of(model: keras.Model) -> keras.Model:
    """The Keras Applications network inside a build_backbone_model model."""
    return next(l for l in model.layers if isinstance(l, keras.Model))


def unfreeze_top(model: keras.Model, name: str, scale: float = 1.0) -> int:
    """Phase 2: makes the backbone's top blocks trainable, batch norm excepted.

    Returns how many of the backbone's layers now train. Batch norm stays
    frozen: its statistics and scales were learned on far more images.
    `scale` (a search's) opens that many times the top blocks' layers.
    """
    network = backbone_of(model)
    network.trainable = True
    names = [layer.name for layer in network.layers]
    top = len(names) - names.index(registered(name).fine_tune_from)
    start = min(len(names) - 1, max(0, len(names) - round(top * scale)))
    for index, layer in enumerate(network.layers):
        layer.trainable = (index >= start
                           and not isinstance(layer, keras.layers.BatchNormalization))
    return sum(1 for layer in network.layers[start:] if layer.trainable and layer.weights)


BACKBONE_WEIGHTS_FILE = "backbone_weights.h5"


def save_backbone_weights(model: keras.Model, directory: str) -> str:
    """Writes the trained backbone's weights where --weights can load them again.

    h5py writes local files only, so a gs:// directory gets a copy.
    """
    path = os.path.join(directory, BACKBONE_WEIGHTS_FILE)
    local_dir = tempfile.mkdtemp() if files.is_remote(directory) else directory
    local = os.path.join(local_dir, BACKBONE_WEIGHTS_FILE)
    backbone_of(model).save_weights(local)
    if local != path:
        files.copy(local, path)
        shutil.rmtree(local_dir, ignore_errors=True)
    return path
