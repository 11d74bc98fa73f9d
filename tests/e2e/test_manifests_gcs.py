"""`imagepipe run` on the digits in dataset layouts in a bucket, into the bucket, against
the same digits as folders there (fake-gcs-server, `scripts/with_gcs.sh`).

The digits of tests/support/manifests.py (write_digit_tree, split_datasets), seeded into
gs://imagepipe-test, in every layout: folders/ (the train/, val/ and test/ tree);
manifests/ (the same tree, with a Vertex AI CSV naming each image by its gs:// URI, and a
Vertex AI JSON Lines file and a headed CSV naming it relative to the file, all at the
tree's root so that an image keeps the name it has in folders/, and with it its place in
ingestion's order); hub/ (Hugging Face Parquet), disk/ (a save_to_disk DatasetDict) and
tfds/ (a TFDS prepared folder), in the folders' order, one shard a split.
tests/support/manifests_gcs_steps.py runs each inside the harness with its output and
pushed model in the bucket. As there, a layout must reach the folders run's accuracy
within a point. Seven runs of 40 to 65 s each: about 6 minutes on two cores.
"""
import pytest

from tests.support import foreign_datasets
from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps
from tests.support.manifests import (CLASSES, RUN_FLAGS, split_datasets, write_digit_tree,
                                     write_headed_csv, write_vertex_csv, write_vertex_jsonl)

pytestmark = [pytest.mark.slow, NEEDS_ROOT]

STEPS = "tests.support.manifests_gcs_steps"
BUCKET = "imagepipe-test"
GS = f"gs://{BUCKET}"
# Four epochs leave the digits near 0.8, below the default blessing threshold (0.9); the
# blessing and the push to the bucket are checked here, not the model, so the bar is lowered
# to the test's own "it learned".
FLAGS = (*RUN_FLAGS, "--accuracy-threshold", "0.5")
# Each layout's --data, under the bucket.
LAYOUTS = {"vertex-csv": "manifests/import.csv", "vertex-jsonl": "manifests/import.jsonl",
           "csv": "manifests/labels.csv", "hf-parquet": "hub", "hf-disk": "disk",
           "tfds": "tfds/digits/plain/1.0.0"}


def _seed(bucket) -> list:
    """Every layout's objects under `bucket` (a local folder); the tree's rows."""
    rows = write_digit_tree(bucket / "folders")
    write_digit_tree(bucket / "manifests")
    write_vertex_csv(bucket / LAYOUTS["vertex-csv"], rows, prefix=f"{GS}/manifests/")
    write_vertex_jsonl(bucket / LAYOUTS["vertex-jsonl"], rows)
    write_headed_csv(bucket / LAYOUTS["csv"], rows)
    with pytest.MonkeyPatch.context() as patch:
        # The foreign writers name their classes foreign_datasets.NAMES: here the ten digits.
        patch.setattr(foreign_datasets, "NAMES", tuple(CLASSES))
        splits = split_datasets(rows)
        foreign_datasets.write_hub_parquet(bucket / "hub", splits, shards=1)
        foreign_datasets.write_save_to_disk(bucket / "disk", splits, files=1)
        foreign_datasets.write_tfds(bucket / "tfds", splits, shards=1)
    return rows


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """(the runs' results, the tree's rows): the folders run first, then each layout's."""
    seed, work = tmp_path_factory.mktemp("seed"), tmp_path_factory.mktemp("work")
    rows = _seed(seed / BUCKET)
    runs = [f"folders={GS}/folders"] + [f"{fmt}={GS}/{data}" for fmt, data in LAYOUTS.items()]
    results = run_steps(STEPS, work / "results.json", work, *runs, "--", *FLAGS,
                        gcs_flags=("--seed", str(seed)))
    assert "error" not in results, results.get("traceback")
    return results, rows


@pytest.mark.parametrize("fmt", list(LAYOUTS))
def test_a_layout_in_the_bucket_trains_as_the_same_digits_in_folders(fmt, seeded):
    results, rows = seeded
    folders = exited(results["folders"])["summary"]
    run = exited(results[fmt])
    summary = run["summary"]
    splits = {"train": sum(use == "training" for *_, use in rows),
              "eval": sum(use == "validation" for *_, use in rows)}
    assert splits == {"train": 796, "eval": 102}  # the digits' own split (test unused)
    assert summary["data"]["path"] == f"{GS}/{LAYOUTS[fmt]}"
    assert summary["data"]["format"] == fmt
    assert summary["data"]["splits"] == splits == folders["data"]["splits"]
    assert summary["data"]["classes"] == CLASSES == folders["data"]["classes"]
    assert summary["data"]["skipped_files"] == []
    assert summary["eval"]["blessed"], run["stdout"][-2000:]
    assert summary["pushed"]["serving"].startswith(f"{GS}/runs/{fmt}/serving/imagepipe/")
    assert "saved_model.pb" in run["pushed_files"], run["pushed_files"]
    accuracy = summary["eval"]["accuracy"], folders["eval"]["accuracy"]
    assert abs(accuracy[0] - accuracy[1]) <= 0.01, (accuracy, run["stdout"][-2000:])
    assert accuracy[0] > 0.5, run["stdout"][-2000:]  # it learned: the comparison is the point
