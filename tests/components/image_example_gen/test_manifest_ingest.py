"""Manifests ingested by the real executor (in-process Beam, no driver, as on Kubeflow):
each kind locally, with its splits and classes; and on a bucket (fake-gcs-server, through
scripts/with_gcs.sh), the manifest and its images in gs://, with one image missing."""
import collections
import json

import pytest

from core.contract import CLASS_TEXT_KEY, FILENAME_KEY, LABEL_KEY
from tests.support.examples import example_gen_properties, read_split, run_example_gen
from tests.support.gcs_harness import NEEDS_ROOT, run_steps
from tests.support.manifests import (digit_rows, digits_beside, write_headed_csv,
                                     write_vertex_csv, write_vertex_jsonl)
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.integration  # real Beam ingestion

STEPS = "tests.components.image_example_gen.manifest_gcs_steps"
WRITERS = {"vertex-csv": (write_vertex_csv, ".csv"), "vertex-jsonl": (write_vertex_jsonl, ".jsonl"),
           "csv": (write_headed_csv, ".csv")}


def written(uri) -> dict:
    """{split: Counter of (class text, label id)} and every file name written."""
    found, names = {}, []
    for split in ("train", "eval"):
        examples = read_split(uri, split)
        found[split] = collections.Counter(
            (e.features.feature[CLASS_TEXT_KEY].bytes_list.value[0].decode(),
             e.features.feature[LABEL_KEY].int64_list.value[0]) for e in examples)
        names += [e.features.feature[FILENAME_KEY].bytes_list.value[0].decode()
                  for e in examples]
    return {"splits": found, "names": names}


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_each_manifest_kind_is_ingested_with_its_splits(tmp_path, fmt):
    rows = digits_beside(tmp_path / "data", per_class=5)
    write, suffix = WRITERS[fmt]
    # Half the rows name their image relative to the manifest, half by absolute path.
    manifest = write(tmp_path / "data" / f"labels{suffix}", rows[::2])
    text = (tmp_path / "data" / f"labels{suffix}").read_text()
    write(tmp_path / "other", rows[1::2], prefix=f"{MNIST_PNG}/")
    extra = (tmp_path / "other").read_text()
    (tmp_path / "data" / f"labels{suffix}").write_text(
        text + (extra.split("\n", 1)[1] if fmt == "csv" else extra))
    examples = run_example_gen(tmp_path / "out", example_gen_properties(
        manifest, allowed_root=str(MNIST_PNG)))
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert report["format"] == fmt and report["skipped"] == []
    assert report["classes"] == [str(d) for d in range(10)]
    assert report["splits"] == {"train": 40, "eval": 10}  # validation; no test rows at 5
    found = written(examples.uri)
    assert all(int(text) == label for split in found["splits"].values() for text, label in split)
    assert sorted(n for n in found["names"] if not n.startswith("/")) == sorted(
        image for image, _, _ in rows[::2])
    assert sum(n.startswith(str(MNIST_PNG)) for n in found["names"]) == 25
    assert (tmp_path / "out" / "labels.txt").read_text().split() == report["classes"]


def test_refused_rows_are_in_the_ingest_report(tmp_path):
    rows = digits_beside(tmp_path / "data", per_class=2)
    manifest = write_vertex_csv(tmp_path / "data" / "m.csv", rows)
    with open(manifest, "a") as f:
        f.write("training,0/gone.png,0\ntraining,../x.png,0\n")
    run_example_gen(tmp_path / "out", example_gen_properties(manifest))
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert [r["path"] for r in report["skipped"]] == ["m.csv:21", "m.csv:22"]
    assert sum(report["splits"].values()) == 20


@pytest.mark.slow
@NEEDS_ROOT
def test_a_manifest_in_a_bucket_is_ingested(tmp_path):
    rows = digit_rows(per_class=5)
    local = tmp_path / "manifest.csv"
    write_vertex_csv(local, rows + [("0/gone.png", "0", "training")], prefix="images/")
    found = run_steps(STEPS, tmp_path / "results.json", local, timeout=600)
    assert "error" not in found, found.get("traceback")
    report = found["report"]
    assert report["format"] == "vertex-csv" and report["splits"] == {"train": 40, "eval": 10}
    assert [r["path"] for r in report["skipped"]] == ["manifest.csv:51"]
    assert "no such image file" in report["skipped"][0]["reason"]
    assert found["names"] and all(n.startswith("images/") for n in found["names"])
