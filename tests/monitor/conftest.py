"""Fixtures for the monitor's tests: a pushed version with a real monitoring reference
(tests/support/monitored.py), made once a session.
"""
import pytest

from tests.support.monitored import monitoring_reference, push_version, write_images


@pytest.fixture(scope="session")
def reference(exported_model, tmp_path_factory):
    """The model folder, the training images and their reference, made once."""
    root = tmp_path_factory.mktemp("reference")
    paths = write_images(root / "train", 40)
    return exported_model.model_dir, paths, monitoring_reference(exported_model.model_dir, paths)


@pytest.fixture
def pushed(tmp_path, reference):
    """An --output with the model pushed and its reference; (output, training images)."""
    model_dir, paths, found = reference
    push_version(tmp_path / "out", model_dir, found)
    return tmp_path / "out", paths
