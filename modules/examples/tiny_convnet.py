"""An example --module-file: a network of your own, and an augmentation of your own.

    imagepipe run --module-file modules/examples/tiny_convnet.py

imagepipe calls `build_model` once, under the training strategy's scope and
its mixed-precision policy, and `augment` on every training batch inside
tf.data (TensorFlow ops only: it runs as a graph, on TPUs too). Use tf_keras
(Keras 2): TFX 1.16 saves Keras 2 models. Any installed package may be
imported; another file beside this one may not (only this file's text travels
with the pipeline).
"""
import tensorflow as tf
import tf_keras as keras


def build_model(input_shape, num_classes, params):
    """(side, side, channels) normalized float32 images -> num_classes probabilities.

    `params` is imagepipe's TrainerParams (params.seed, params.batch_size, ...).
    """
    inputs = keras.Input(shape=input_shape)
    x = inputs
    for filters in (32, 64, 128):
        x = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        # Momentum 0.9, not Keras' 0.99: with a dozen steps an epoch on a small
        # dataset, the moving statistics would lag the weights for many epochs.
        x = keras.layers.ReLU()(keras.layers.BatchNormalization(momentum=0.9)(x))
        x = keras.layers.MaxPooling2D()(x)
    # Global pooling: the weights do not grow with the image side.
    x = keras.layers.GlobalAveragePooling2D()(x)
    # Softmax in float32: under mixed precision the rest computes in float16.
    outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32")(x)
    return keras.Model(inputs, outputs, name="tiny_convnet")


def augment(images, params):
    """A [batch, side, side, channels] batch shifted by up to 2 pixels (one offset a batch)."""
    padded = tf.pad(images, [[0, 0], [2, 2], [2, 2], [0, 0]], mode="REFLECT")
    return tf.image.random_crop(padded, tf.shape(images), seed=params.seed)
