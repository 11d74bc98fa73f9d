"""Shared test set-up: Keras 2 for TFX, quiet TF, and small generated datasets."""
import os

# Before anything imports TensorFlow: TFX 1.16 and TFT need Keras 2.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pathlib  # noqa: E402
import sys  # noqa: E402

# TFX's BaseBeamExecutor parses sys.argv with absl flags (base_beam_executor.py,
# TODO b/174174381 upstream), so pytest's own flags would be read as absl's:
# `-v` becomes --verbosity. pytest has parsed them by the time this loads.
del sys.argv[1:]

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from PIL import Image  # noqa: E402

# Two logical CPUs stand in for two GPUs in the MirroredStrategy tests. Devices
# can only be split before TensorFlow initializes its runtime, hence here.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent


TIERS = ("unit", "integration", "slow")


def pytest_collection_modifyitems(items):
    """A test marked neither `integration` nor `slow` is a `unit` test (pytest.ini)."""
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True, scope="session")
def no_tfx_self_packaging():
    """Fails any in-process TFX Beam run that would package TFX into /tmp.

    Without a dependency flag, TFX's BaseBeamExecutor copies its whole install
    into a fresh mkdtemp and builds an sdist there (52 MB, never deleted:
    tfx/utils/dependency_utils.build_ephemeral_package). One test without the
    flag leaked 104 MB per CI run until the disk filled. Pipelines must go
    through pipeline.beam_deps.with_setup_file.
    """
    from tfx.utils import dependency_utils

    def refuse():
        raise AssertionError("TFX would build its ephemeral sdist in /tmp: pass "
                             "--setup_file (pipeline.beam_deps.with_setup_file)")
    original = dependency_utils.build_ephemeral_package
    dependency_utils.build_ephemeral_package = refuse
    yield
    dependency_utils.build_ephemeral_package = original
MNIST_PNG = REPO_ROOT / "data" / "mnist_1k" / "png"


def write_image(path: pathlib.Path, size=(8, 8), mode="RGB", fmt=None, seed=0) -> pathlib.Path:
    """Writes a small random image; the format follows the extension unless given."""
    rng = np.random.default_rng(seed)
    bands = len(Image.new(mode, (1, 1)).getbands())
    pixels = rng.integers(0, 256, (size[1], size[0], bands), dtype=np.uint8)
    image = Image.fromarray(pixels.squeeze(-1) if bands == 1 else pixels,
                            "L" if bands == 1 else ("RGBA" if bands == 4 else "RGB"))
    if image.mode != mode:
        image = image.convert(mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format=fmt)
    return path


@pytest.fixture
def make_image():
    """The `write_image` helper, as a fixture (test modules are not importable)."""
    return write_image


@pytest.fixture(scope="session")
def exported_model(tmp_path_factory):
    """A real exported SavedModel (three signatures, Transform inside) and its examples.

    Session-wide because it costs seconds; tests must copy it before changing it.
    """
    from tests.transformed import export_tiny_model
    return export_tiny_model(tmp_path_factory.mktemp("exported"), write_image)


@pytest.fixture(params=[1, 3], ids=["gray", "rgb"])
def transformed(request, tmp_path, make_image):
    """Twelve 8x8 PNGs in two classes, ingested and analyzed, in 1 or 3 channels
    (tests/transformed.py)."""
    from tests.transformed import transformed_fixture
    return transformed_fixture(tmp_path, make_image, request.param)


@pytest.fixture
def mnist_subset(tmp_path) -> pathlib.Path:
    """A class-per-folder copy of the first 10 real digits of each class (100 PNGs)."""
    root = tmp_path / "mnist_100"
    for class_dir in sorted(MNIST_PNG.iterdir()):
        (root / class_dir.name).mkdir(parents=True)
        for png in sorted(class_dir.iterdir())[:10]:
            (root / class_dir.name / png.name).write_bytes(png.read_bytes())
    return root
