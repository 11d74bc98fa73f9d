"""`imagepipe gc` on real local runs: what it keeps still serves, warm-starts, judges and
rolls back; what it deletes is gone from disk and DELETED in ML Metadata.

    .venv/bin/python -m pytest -q tests/e2e/test_gc.py    # four tiny runs: about 2-3 minutes

Three runs, each on one more span of the bundled digits, push three versions; gc keeps one
(dry run first, then --yes); a fourth run on a new span warm-starts from the served
version, is judged against its model, pushes; a rollback to the kept version works.
"""
import json
import os

import pytest

from settings.config import PipelineConfig
from tests.support.cli import imagepipe, run_pipeline
from tests.support.digits import make_span

pytestmark = pytest.mark.slow

TINY = ("--image-size", 28, "--channels", 1, "--train-steps", 3, "--accuracy-threshold", 0,
        "--baseline-tolerance", 1, "--quantize", "none")
GC = ("--keep-versions", 1, "--min-age", 0)


def _run(spans, out, span: int) -> dict:
    make_span(spans / f"span-{span}", take=slice(20 * (span - 1), 20 * span))
    return run_pipeline(spans / "span-{SPAN}", out, *TINY)[0]


def _disk_bytes(folder) -> int:
    """Bytes of the files under `folder`, each inode once (examples link into the spans)."""
    seen, total = set(), 0
    for parent, _, names in os.walk(folder):
        for name in names:
            found = os.lstat(os.path.join(parent, name))
            if (found.st_dev, found.st_ino) not in seen:
                seen.add((found.st_dev, found.st_ino))
                total += found.st_size
    return total


def _files(folder) -> set:
    return {os.path.join(p, n) for p, _, names in os.walk(folder) for n in names}


def _store(out):
    from report.metadata import open_store
    return open_store(PipelineConfig.from_values(output=str(out)))


def _evaluator_inputs(out) -> dict:
    """{input key: URI} of the newest run's Evaluator execution."""
    from report.metadata import latest_run
    store = _store(out)
    execution = latest_run(store, "imagepipe")["Evaluator"]
    events = [e for e in store.get_events_by_execution_ids([execution.id])
              if e.type == e.INPUT]
    uris = {a.id: a.uri for a in store.get_artifacts_by_id([e.artifact_id for e in events])}
    return {e.path.steps[0].key: uris[e.artifact_id] for e in events}


def _source(out, version: int) -> str:
    path = out / "serving" / "imagepipe" / str(version) / "assets.extra" / "imagepipe_push.json"
    return json.loads(path.read_text())["source_uri"]


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("gc")
    spans, out = root / "spans", root / "out"
    versions = [_run(spans, out, span)["pushed"]["version"] for span in (1, 2, 3)]
    found = {"out": out, "versions": versions, "bytes_before": _disk_bytes(out),
             "inputs_before": _evaluator_inputs(out), "files_before": _files(out)}
    found["dry_run"] = imagepipe("gc", "--output", out, *GC, check=True).stdout
    found["files_after_dry_run"] = _files(out)
    record = root / "gc.json"
    found["yes"] = imagepipe("gc", "--output", out, *GC, "--yes", "--json", record,
                             check=True).stdout
    found["record"] = json.loads(record.read_text())
    found["bytes_after"] = _disk_bytes(out)
    found["next"] = _run(spans, out, 4)
    found["next_inputs"] = _evaluator_inputs(out)
    found["rollback"] = imagepipe("rollback", "--output", out, "--to", versions[-1],
                                  check=True).stdout
    return found


def test_each_run_pushed_a_version(history):
    assert len(set(history["versions"])) == 3 and None not in history["versions"]


def test_a_dry_run_prints_the_plan_with_sizes_and_deletes_nothing(history):
    out = history["dry_run"]
    assert history["files_after_dry_run"] == history["files_before"]
    assert "dry run   nothing was deleted: add --yes" in out
    first, second, served = history["versions"]
    assert f"delete    version serving/imagepipe/{first}" in out
    assert f"delete    version serving/imagepipe/{second}" in out
    assert f"keep      version serving/imagepipe/{served}" in out
    assert any(line.startswith("total     before") and "to delete" in line
               for line in out.splitlines())


def test_yes_deletes_older_versions_and_runs_and_keeps_the_served_lineage(history):
    out, record = history["out"], history["record"]
    first, second, served = history["versions"]
    assert record["deleted"] and record["versions_kept"] == [served]
    assert history["bytes_after"] < history["bytes_before"]
    assert record["totals"]["delete"] > 0
    for version in (first, second):
        assert not (out / "serving" / "imagepipe" / str(version)).exists()
        assert not (out / "tflite" / "imagepipe" / str(version)).exists()
    assert (out / "serving" / "imagepipe" / str(served) / "saved_model.pb").exists()
    assert os.path.isdir(_source(out, served))
    # The run behind the served model can be audited: every input its Evaluator read.
    assert all(os.path.isdir(uri) for uri in history["inputs_before"].values())
    deleted = [e["path"] for e in record["delete"] if e["kind"] == "artifact"]
    assert deleted and not any(os.path.exists(path) for path in deleted)


def test_deleted_artifacts_are_deleted_in_ml_metadata_and_kept_ones_live(history):
    from ml_metadata.proto import metadata_store_pb2 as mlmd
    store, record = _store(history["out"]), history["record"]
    for entry in (e for e in record["delete"] if e["kind"] == "artifact"):
        states = {a.state for a in store.get_artifacts_by_uri(entry["path"])}
        assert states == {mlmd.Artifact.DELETED}, entry
    for uri in history["inputs_before"].values():
        assert {a.state for a in store.get_artifacts_by_uri(uri)} == {mlmd.Artifact.LIVE}


def test_the_next_run_warm_starts_from_the_served_version_and_is_judged_against_it(history):
    summary, served = history["next"], history["versions"][-1]
    source = _source(history["out"], served)
    assert summary["warm_start"]["from"] == source
    assert history["next_inputs"]["baseline_model"] == source
    assert summary["pushed"]["version"] > served


def test_a_rollback_to_the_kept_version_works(history):
    newest = history["next"]["pushed"]["version"]
    assert f"serving version {history['versions'][-1]} (was {newest})" in history["rollback"]
