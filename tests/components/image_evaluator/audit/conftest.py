"""A tiny image classifier trained in a second or two, as the audit sees models."""
import numpy as np
import pytest

SIZE = 12


def _images(count, seed):
    """Class 0: the left half bright; class 1: the right half. Pixels in [0, 255]."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    pixels = rng.uniform(0, 80, (count, SIZE, SIZE, 1)).astype(np.float32)
    for i, label in enumerate(labels):
        half = slice(0, SIZE // 2) if label == 0 else slice(SIZE // 2, SIZE)
        pixels[i, :, half] += 120
    return pixels, labels


@pytest.fixture(scope="module")
def tiny():
    """(Classifier, Keras model, eval pixels, eval labels); the model ~100% accurate."""
    import tf_keras as keras
    from components.image_evaluator.audit.classifier import Classifier
    keras.utils.set_random_seed(0)
    inputs = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(4, 3, activation="relu", name="conv")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(
        keras.layers.Flatten()(x)))
    # Not to saturation: integrated gradients of a softmax stuck at 1.0 are all 0.
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy")
    train, train_labels = _images(256, 0)
    model.fit(train / 255.0, train_labels, epochs=4, batch_size=32, verbose=0)
    pixels, labels = _images(64, 1)
    return (Classifier(lambda p: model(p / 255.0), SIZE, 1), model, pixels, labels)
