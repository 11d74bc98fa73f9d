"""Shared test set-up: Keras 2 for TFX, quiet TF, and small generated datasets.

TensorFlow, TFX and Beam cost seconds to import: only the hooks and fixtures that need
them touch them, so a test that never uses them does not wait for them. The helpers
themselves live in tests/support/.
"""
import os

# Before anything imports TensorFlow: TFX 1.16 and TFT need Keras 2.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import importlib.abc  # noqa: E402
import importlib.machinery  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

# TFX's BaseBeamExecutor parses sys.argv with absl flags (base_beam_executor.py,
# TODO b/174174381 upstream), so pytest's own flags would be read as absl's:
# `-v` becomes --verbosity. pytest has parsed them by the time this loads.
del sys.argv[1:]

import pytest  # noqa: E402

from tests.support.digits import make_span  # noqa: E402
from tests.support.images import write_image  # noqa: E402

TIERS = ("unit", "integration", "slow")


def pytest_collection_modifyitems(items):
    """A test marked neither `integration` nor `slow` is a `unit` test (pytest.ini)."""
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)


def pytest_collection_finish(session):
    """Two logical CPUs stand in for two GPUs in the MirroredStrategy tests.

    Devices can only be split before TensorFlow initializes its runtime: here, after
    the test modules were imported and before any test ran. Where none of them
    imported TensorFlow, no collected test needs the split.
    """
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return
    try:
        tf.config.set_logical_device_configuration(
            tf.config.list_physical_devices("CPU")[0],
            [tf.config.LogicalDeviceConfiguration()] * 2)
    except RuntimeError as e:  # a test module ran TensorFlow at import time
        warnings.warn(f"the CPU is not split in two logical devices: {e}")


DEPENDENCY_UTILS = "tfx.utils.dependency_utils"


def _refuse_tfx_self_packaging():
    raise AssertionError("TFX would build its ephemeral sdist in /tmp: pass "
                         "--setup_file (core.beam_deps.with_setup_file)")


class _RefuseOnImport(importlib.abc.MetaPathFinder):
    """Puts the refusal into tfx.utils.dependency_utils when something imports it."""

    def find_spec(self, fullname, path, target=None):
        if fullname != DEPENDENCY_UTILS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            module.build_ephemeral_package = _refuse_tfx_self_packaging
        spec.loader.exec_module = exec_module
        return spec


@pytest.fixture(autouse=True, scope="session")
def no_tfx_self_packaging():
    """Fails any in-process TFX Beam run that would package TFX into /tmp.

    Without a dependency flag, TFX's BaseBeamExecutor copies its whole install
    into a fresh mkdtemp and builds an sdist there (52 MB, never deleted:
    tfx/utils/dependency_utils.build_ephemeral_package). One test without the
    flag leaked 104 MB per CI run until the disk filled. Pipelines must go
    through core.beam_deps.with_setup_file. TFX is patched where a test module
    imported it, or else when it is imported: this fixture does not import it.
    """
    finder = _RefuseOnImport()
    sys.meta_path.insert(0, finder)
    loaded = sys.modules.get(DEPENDENCY_UTILS)
    original = loaded.build_ephemeral_package if loaded else None
    if loaded:
        loaded.build_ephemeral_package = _refuse_tfx_self_packaging
    yield
    sys.meta_path.remove(finder)
    if loaded:
        loaded.build_ephemeral_package = original


@pytest.fixture
def make_image():
    """tests/support/images.py's `write_image`, as a fixture."""
    return write_image


@pytest.fixture(scope="session")
def exported_model(tmp_path_factory):
    """A real exported SavedModel (three signatures, Transform inside) and its examples.

    Session-wide because it costs seconds; tests must copy it before changing it.
    """
    from tests.support.transformed import export_tiny_model
    return export_tiny_model(tmp_path_factory.mktemp("exported"), write_image)


@pytest.fixture(params=[1, 3], ids=["gray", "rgb"])
def transformed(request, tmp_path, make_image):
    """Twelve 8x8 PNGs in two classes, ingested and analyzed, in 1 or 3 channels
    (tests/support/transformed.py)."""
    from tests.support.transformed import transformed_fixture
    return transformed_fixture(tmp_path, make_image, request.param)


@pytest.fixture
def mnist_subset(tmp_path) -> pathlib.Path:
    """A class-per-folder copy of the first 10 real digits of each class (100 PNGs)."""
    return make_span(tmp_path / "mnist_100", take=slice(0, 10), ready=False)
