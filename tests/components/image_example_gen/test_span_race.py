"""Two executions ingest one span at once: one publishes, the other uses its entry.

Both run the real executor on one span store, started together, as an
overlapping recurring run or two machines would: on a local store as two
threads of this process, and on a bucket (fake-gcs-server, through
scripts/with_gcs.sh) as two processes (span_race_steps.py).
"""
import importlib

import pytest

from tests.support.digits import make_span
from tests.support.gcs_harness import NEEDS_ROOT, run_steps

STEPS = "tests.components.image_example_gen.span_race_steps"
BUCKET = "gs://imagepipe-test"
LOST = "another run published it first"

pytestmark = pytest.mark.integration  # real Beam ingestion, in two processes


def _span(mnist_subset, target):
    """A finished span: two classes of ten digits, and its _SUCCESS marker."""
    return make_span(target, source=mnist_subset, classes=("0", "1"))


def _steps():
    """span_race_steps.py, imported."""
    return importlib.import_module(STEPS)


def _check(results: dict, output: str) -> None:
    """Exactly one complete entry; both executions read it; the loser's attempt is gone;
    and one of them lost the publish: the race really happened."""
    workers = results["workers"]
    assert [w["code"] for w in workers] == [0, 0], [w["stderr"][-2000:] for w in workers]
    [(name, entry)] = results["store"].items()
    published = entry["published"]
    assert published and sorted(entry["names"]) == sorted(
        ["_COMPLETE", published.rsplit("/", 1)[1]]), entry
    # Not truncated: every record the report counts is in the published files.
    assert entry["records"] == entry["report_splits"] and sum(entry["records"].values()) == 20
    rows = [w["report"]["spans"][0] for w in workers]
    assert {row["entry"] for row in rows} == {published}
    assert [w["records"] for w in workers] == [entry["records"]] * 2
    assert output.count(LOST) == 1, output[-3000:]
    assert sorted(row["reused"] for row in rows) == [False, True]


def test_two_local_ingestions_of_one_span_publish_one_entry(tmp_path, mnist_subset, capsys):
    spans = tmp_path / "spans"
    _span(mnist_subset, spans / "s1")
    workers = _steps().in_threads(str(spans / "s{SPAN}"), str(tmp_path / "out"))
    printed = capsys.readouterr().out
    _check({"workers": workers, "store": _steps().store_entries(str(tmp_path / "out"))},
           printed)


@pytest.mark.slow
@NEEDS_ROOT
def test_two_ingestions_of_one_span_in_a_bucket_publish_one_entry(tmp_path, mnist_subset):
    local = _span(mnist_subset, tmp_path / "s1")
    found = run_steps(STEPS, tmp_path / "results.json", f"{BUCKET}/spans/s{{SPAN}}",
                      f"{BUCKET}/race", local, f"{BUCKET}/spans/s1", timeout=600)
    _check(found, "".join(w["stdout"] for w in found["workers"]))
    for worker in found["workers"]:  # each says it won or lost
        assert (LOST in worker["stdout"]) == worker["report"]["spans"][0]["reused"]


def _check_classes(found: dict) -> None:
    """Both new classes are in classes.json, after the shared ones, and every record of
    every entry has the id classes.json gives its class."""
    workers = found["workers"]
    assert [w["code"] for w in workers] == [0, 0], [w["stderr"][-2000:] for w in workers]
    classes = found["labels"]["classes"]
    assert classes[:2] == ["0", "1"] and sorted(classes[2:]) == ["2", "3"], classes
    entries = found["labels"]["entries"]
    assert len(entries) == 2 and all(e["records"] == 30 for e in entries.values()), entries
    assert all(e["disagree"] == 0 for e in entries.values()), entries
    # Each worker encoded with a list that holds its own new class at classes.json's id.
    for worker in workers:
        own = set(worker["report"]["classes"]) - {"0", "1"}
        assert all(classes.index(name) == worker["report"]["classes"].index(name)
                   for name in own), (classes, worker["report"]["classes"])


def _two_datasets(mnist_subset, tmp_path):
    return (make_span(tmp_path / "a", source=mnist_subset, classes=("0", "1", "2")),
            make_span(tmp_path / "b", source=mnist_subset, classes=("0", "1", "3")))


def test_two_local_ingestions_with_different_new_classes_keep_both(tmp_path, mnist_subset):
    a, b = _two_datasets(mnist_subset, tmp_path)
    found = run_steps_locally(tmp_path, a, b)
    _check_classes(found)


def run_steps_locally(tmp_path, a, b) -> dict:
    """The class race on a local store: the same steps, outside the GCS harness."""
    import json
    import subprocess
    import sys
    from tests.support.paths import REPO
    results = tmp_path / "results.json"
    subprocess.run([sys.executable, "-m", STEPS, str(results), "classes",
                    str(tmp_path / "out"), str(a), str(tmp_path / "data-a"), str(b),
                    str(tmp_path / "data-b")], cwd=REPO, check=True, timeout=600)
    return json.loads(results.read_text())


@pytest.mark.slow
@NEEDS_ROOT
def test_two_ingestions_with_different_new_classes_in_a_bucket_keep_both(tmp_path,
                                                                         mnist_subset):
    a, b = _two_datasets(mnist_subset, tmp_path)
    found = run_steps(STEPS, tmp_path / "results.json", "classes", f"{BUCKET}/classes",
                      a, f"{BUCKET}/data-a", b, f"{BUCKET}/data-b", timeout=600)
    _check_classes(found)
