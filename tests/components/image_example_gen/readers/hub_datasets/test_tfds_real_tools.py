"""What the real tensorflow-datasets prepares, read by our TFDS reader (which does not
import it).

tensorflow-datasets cannot be installed beside the pinned stack, and its own requirements
would pull a second TensorFlow. So a separate venv sees this project's packages (a .pth
file naming our site-packages: the same TensorFlow, protobuf and numpy) and adds only
tensorflow-datasets and its light dependencies, with --no-deps, from the registry; its
builder prepares a tiny dataset of the bundled digits (tests/support/tfds_real_writer.py)
as TFRecord shards, and as array_record shards when array_record installs.
"""
import json
import os
import subprocess
import sys
import sysconfig
import time

import pytest

from components.image_example_gen.readers.hub_datasets import tfds_folders
from components.image_example_gen.readers.folder_tree import DatasetError
from settings.config import PipelineConfig
from tests.support.paths import MNIST_PNG, REPO

pytestmark = pytest.mark.slow

OPTIONS = PipelineConfig.from_values().ingest_options()
NAMES = ["zero", "one", "two"]
WRITER = REPO / "tests" / "support" / "tfds_real_writer.py"
# tensorflow-datasets and what its builder imports that this project's venv lacks.
PACKAGES = ("tensorflow-datasets", "etils", "immutabledict", "promise", "simple-parsing",
            "toml", "dm-tree", "importlib_resources", "fsspec", "array-record")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The writer's output folder and manifest."""
    base = tmp_path_factory.mktemp("tfds_real")
    venv, started = base / "venv", time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "imagepipe_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps",
                          *PACKAGES], capture_output=True, text=True, timeout=1200)
    if pip.returncode:
        pytest.skip(f"pip install tensorflow-datasets failed: {pip.stderr[-500:]}")
    out = base / "out"
    written = subprocess.run([str(venv / "bin" / "python"), str(WRITER), str(out),
                              str(MNIST_PNG)], capture_output=True, text=True, timeout=600,
                             cwd=base, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
                                            # TFDS leaves empty temporary folders behind
                                            "TMPDIR": str(base)})
    assert written.returncode == 0, written.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    print(f"tensorflow-datasets {manifest['tensorflow_datasets']}: "
          f"{time.monotonic() - started:.0f} s")
    return out, manifest


def _pixels(data: bytes) -> bytes:
    import io
    from PIL import Image
    return Image.open(io.BytesIO(data)).convert("L").tobytes()


def test_tfrecord_folder_prepared_by_tfds(prepared):
    import tensorflow as tf
    out, manifest = prepared
    root = out / "tfrecord" / "digits"
    assert tfds_folders.looks_like_tfds(str(root))
    listing = tfds_folders.list_tfds(str(root), OPTIONS)
    assert listing.classes == NAMES and listing.unused == ["test"]
    found = {}
    for unit in listing.files:
        for item in tfds_folders.read_tfds_unit(unit, str(root), listing.classes, OPTIONS,
                                                lambda relpath: "hashed", {}):
            assert not isinstance(item, dict), item
            feature = tf.train.Example.FromString(item[1]).features.feature
            found.setdefault(item[0], []).append((
                _pixels(feature["image/encoded"].bytes_list.value[0]),
                feature["image/class/label"].int64_list.value[0]))
    want = {split: sorted((_pixels(open(path, "rb").read()), label)
                          for path, label in manifest["splits"][name])
            for split, name in (("train", "train"), ("eval", "validation"))}
    assert {split: sorted(rows) for split, rows in found.items()} == want


def test_array_record_folder_prepared_by_tfds_is_refused(prepared):
    out, manifest = prepared
    if "array_record" not in manifest["formats"]:
        pytest.skip("array_record did not install")
    with pytest.raises(DatasetError, match="array_record shards cannot be read here"):
        tfds_folders.list_tfds(str(out / "array_record" / "digits"), OPTIONS)
