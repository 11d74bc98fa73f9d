"""build_cnn: the TPU MNIST example's architecture, and it learns."""
import numpy as np

from modules.model import build_cnn


def test_cnn_has_the_reference_layers_and_float32_softmax():
    model = build_cnn((28, 28, 1), 10, 1e-3)
    kinds = [type(layer).__name__ for layer in model.layers[1:]]
    assert kinds == ["Conv2D", "Conv2D", "MaxPooling2D", "Dropout", "Flatten", "Dense",
                     "Dropout", "Dense"]
    assert model.output_shape == (None, 10)
    assert model.layers[-1].dtype == "float32"


def test_cnn_fits_a_separable_toy_problem():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 12, 12, 1)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 0).astype("int64")
    x[y == 1] += 1.0
    model = build_cnn((12, 12, 1), 2, 1e-3)
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
