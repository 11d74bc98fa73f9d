"""What the real Hugging Face `datasets` writes, read by our readers under pyarrow 10.0.1.

A separate venv (python -m venv, then pip install datasets pillow from the registry)
writes tiny datasets of the bundled digits with a current `datasets` and the newer pyarrow
it brings (tests/support/hf_real_writer.py): Hub-layout Parquet shards with their card,
save_to_disk folders, string labels, and large_binary/large_string columns. This process
reads them. Building the venv takes about VENV_SECONDS and needs the registry.
"""
import json
import subprocess
import sys
import time

import pytest

from components.image_example_gen.readers.hub_datasets import hf_datasets, hf_features, hf_rows
from settings.config import PipelineConfig
from tests.support import foreign_datasets as fd
from tests.support.paths import MNIST_PNG, REPO

pytestmark = pytest.mark.slow

OPTIONS = PipelineConfig.from_values().ingest_options()
READ_OPTIONS = PipelineConfig.from_values(allowed_root=str(MNIST_PNG)).ingest_options()
NAMES = ["zero", "one", "two"]
WRITER = REPO / "tests" / "support" / "hf_real_writer.py"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The writer's output folder, its manifest, and the venv build's seconds."""
    base = tmp_path_factory.mktemp("hf_real")
    venv, started = base / "venv", time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "datasets",
                          "pillow"], capture_output=True, text=True, timeout=1200)
    if pip.returncode:
        pytest.skip(f"pip install datasets failed (no registry?): {pip.stderr[-500:]}")
    seconds = time.monotonic() - started
    out = base / "out"
    subprocess.run([str(venv / "bin" / "python"), str(WRITER), str(out), str(MNIST_PNG)],
                   check=True, timeout=600, cwd=base)
    manifest = json.loads((out / "manifest.json").read_text())
    print(f"venv with datasets {manifest['datasets']}, pyarrow {manifest['pyarrow']}: "
          f"{seconds:.0f} s")
    return out, manifest


def _read(listing, root):
    """{split: sorted [(image bytes, label id, class name)]}, and the skipped records.
    Rows that name their image files (to_parquet's) name the digits' folder: allowed."""
    examples, skipped = fd.read_all(listing, root, hf_rows.read_hf_unit, READ_OPTIONS)
    found = {}
    for split, label, name, image in examples.values():
        found.setdefault(split, []).append((image, label, name))
    return {split: sorted(rows) for split, rows in found.items()}, skipped


def _expected(rows, classes=NAMES):
    return sorted((open(path, "rb").read(), classes.index(NAMES[label]), NAMES[label])
                  for path, label in rows)


@pytest.mark.parametrize("folder", ["hub", "card_only", "paths"])
def test_hub_parquet_written_by_datasets(written, folder):
    """hub/ and card_only/ hold the image bytes; paths/ (to_parquet of image files) only
    their absolute paths, which are read instead (under --allowed-root)."""
    out, manifest = written
    if folder == "card_only" and not manifest["card"]:
        pytest.skip("this datasets version wrote no card")
    root = out / folder
    assert hf_datasets.looks_like_hf_parquet(str(root))
    listing = hf_datasets.list_hf_parquet(str(root), OPTIONS)
    assert listing.classes == NAMES and listing.unused == ["test"]
    found, skipped = _read(listing, root)
    assert not skipped
    assert found == {"train": _expected(manifest["splits"]["train"]),
                     "eval": _expected(manifest["splits"]["validation"])}


def test_string_labels_written_by_datasets(written):
    out, manifest = written
    listing = hf_datasets.list_hf_parquet(str(out / "strings"), OPTIONS)
    assert listing.classes == sorted(NAMES)
    found, _ = _read(listing, out / "strings")
    assert found == {"hashed": _expected(manifest["strings"], sorted(NAMES))}


@pytest.mark.parametrize("folder", ["disk_dict", "disk_one"])
def test_save_to_disk_written_by_datasets(written, folder):
    out, manifest = written
    root = out / folder
    assert hf_datasets.looks_like_hf_disk(str(root))
    listing = hf_datasets.list_hf_disk(str(root), OPTIONS)
    assert listing.classes == NAMES
    found, skipped = _read(listing, root)
    assert not skipped
    if folder == "disk_dict":
        assert listing.unused == ["test"]
        assert found == {"train": _expected(manifest["splits"]["train"]),
                         "eval": _expected(manifest["splits"]["validation"])}
    else:
        assert found == {"hashed": _expected(manifest["splits"]["train"])}


def test_large_types_zstd_and_data_page_v2_from_a_newer_pyarrow(written):
    out, manifest = written
    listing = hf_datasets.list_hf_parquet(str(out / "large" / "train.parquet"), OPTIONS)
    want = {"hashed": _expected(manifest["large"], sorted(NAMES))}
    assert listing.classes == sorted(NAMES)
    assert _read(listing, out / "large" / "train.parquet")[0] == want
    arrow = hf_rows.HfRows("data-00000-of-00001.arrow", 0, len(manifest["large"]), None,
                               "image", "label", True)
    columns = hf_features.Columns("image", "label", True)
    stream = hf_datasets.listing_of(str(out / "large"), [arrow], hf_features.Declared(),
                                    columns, [], "hf-disk")
    assert _read(stream, out / "large")[0] == want
