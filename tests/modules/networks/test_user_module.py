"""A user's module file: loaded from its text, wrapped, and refused with file and line."""
import pytest
import tensorflow as tf

from modules.networks import user_module
from modules.networks.summaries import HISTOGRAM_SUMMARY, IMAGE_SUMMARY
from modules.networks.user_module import ModuleFileError
from tests.support.paths import EXAMPLE_MODULE

EXAMPLE = str(EXAMPLE_MODULE)
GOOD = """
import tf_keras as keras

def build_model(input_shape, num_classes, params):
    inputs = keras.Input(shape=input_shape)
    x = keras.layers.GlobalAveragePooling2D()(inputs)
    return keras.Model(inputs, keras.layers.Dense(num_classes, activation="softmax")(x))
"""


def _build(text, classes=3, path="/models/mine.py"):
    module = user_module.load(text, path)
    return user_module.build(module, path, (8, 8, 1), classes, params=None)


def test_the_wrapped_model_has_imagepipes_summaries_around_the_users_network():
    model = _build(GOOD)
    names = [layer.name for layer in model.layers]
    assert names[1] == IMAGE_SUMMARY and names[-1] == HISTOGRAM_SUMMARY
    assert model.output_shape == (None, 3) and model.output.dtype == tf.float32
    user_module.check_probabilities(model, "/models/mine.py")


def test_the_example_module_builds_and_augments_without_changing_shapes():
    text = open(EXAMPLE).read()
    module = user_module.load(text, EXAMPLE)
    params = type("Params", (), {"seed": 3})()
    model = user_module.build(module, EXAMPLE, (28, 28, 1), 10, params)
    user_module.check_probabilities(model, EXAMPLE)
    images = tf.random.normal([4, 28, 28, 1])
    shifted = user_module.augment_fn(module, params)(images)
    assert shifted.shape == images.shape


@pytest.mark.parametrize("text, message", [
    ("def build_model(:\n    pass\n", r"mine.py, line 1: loading it raised SyntaxError"),
    ("import numpy\nimport not_a_package_anywhere\n",
     r"mine.py, line 2: loading it raised ModuleNotFoundError"),
    ("def make_model():\n    pass\n", r"mine.py: defines no build_model\(input_shape"),
    ("build_model = 3\n", r"defines no build_model"),
    (GOOD + "augment = 'flip'\n", r"`augment` must be a function"),
])
def test_a_module_that_cannot_load_names_the_file_and_line(text, message):
    with pytest.raises(ModuleFileError, match=message):
        user_module.load(text, "/models/mine.py")


def test_an_error_inside_build_model_names_the_line_that_raised():
    text = "def build_model(input_shape, num_classes, params):\n    return 1 / 0\n"
    with pytest.raises(ModuleFileError, match=r"mine.py, line 2: build_model raised "
                                              r"ZeroDivisionError"):
        _build(text)


def test_an_output_that_does_not_match_the_classes_is_refused():
    with pytest.raises(ModuleFileError, match=r"outputs \(None, 3\); expected \(None, 5\)"):
        _build(GOOD.replace("Dense(num_classes", "Dense(3"), classes=5)


def test_something_other_than_a_tf_keras_model_is_refused():
    text = "def build_model(input_shape, num_classes, params):\n    return 'a model'\n"
    with pytest.raises(ModuleFileError, match="not a tf_keras Model"):
        _build(text)


def test_logits_instead_of_probabilities_are_refused():
    model = _build(GOOD.replace(', activation="softmax"', ""))
    with pytest.raises(ModuleFileError, match="not probabilities .* end the model with a "
                                              "softmax"):
        user_module.check_probabilities(model, "/models/mine.py")


def test_read_source_refuses_missing_binary_and_huge_files(tmp_path):
    with pytest.raises(ModuleFileError, match="absent.py: cannot be read"):
        user_module.read_source(str(tmp_path / "absent.py"))
    binary = tmp_path / "weights.py"
    binary.write_bytes(b"\xff\xfe\x00" * 10)
    with pytest.raises(ModuleFileError, match="not UTF-8 text"):
        user_module.read_source(str(binary))
    huge = tmp_path / "huge.py"
    huge.write_text("#" * (user_module.MAX_SOURCE_BYTES + 1))
    with pytest.raises(ModuleFileError, match="over 256 KiB"):
        user_module.read_source(str(huge))


def test_the_text_is_what_runs_so_an_edit_changes_the_hash(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(GOOD)
    first = user_module.sha256(user_module.read_source(str(path)))
    path.write_text(GOOD + "# tuned\n")
    assert user_module.sha256(user_module.read_source(str(path))) != first
