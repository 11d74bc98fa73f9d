"""`imagepipe gc` on a compiled pipeline's root in a real GCS server (fake-gcs-server,
`scripts/with_gcs.sh`): the same plan as in a folder, carried out through
core/storage/files.py, with the bucket's lock object taken and given back.

bucket_gc_steps.py runs inside the server's namespace and writes what each step
returned and left in the bucket; the tests read it.
"""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

STEPS = "tests.retention.bucket_gc_steps"
pytestmark = [pytest.mark.slow, NEEDS_ROOT]
ROOT = "gs://imagepipe-test/root"
DELETED = ("serving/imagepipe/100/", "serving/imagepipe/350/",
           "serving/imagepipe/.400.partial-1234abcd/", "tflite/imagepipe/100/",
           "tfx/imagepipe/run-a/", "tfx/ImageExampleGen/spans/span-1-aaaa/attempt-killed/",
           "tfx/ImageExampleGen/spans/span-3-cccc/")


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("bucket_gc")
    found = run_steps(STEPS, work / "results.json", work, timeout=600)
    assert "error" not in found, found.get("traceback")
    return found


def _under(path: str, prefixes) -> bool:
    return any(path.startswith(p) for p in prefixes)


def test_a_dry_run_lists_the_plan_and_leaves_the_bucket_as_it_was(steps):
    out = exited(steps["dry_run"])["stdout"]
    assert steps["after_dry_run"] == steps["before"]
    assert "dry run   nothing was deleted" in out
    assert sorted(line.split()[2] + "/" for line in out.splitlines()
                  if line.startswith("delete")) == sorted(DELETED)


def test_yes_deletes_exactly_the_plan_in_the_bucket(steps):
    exited(steps["yes"])
    before, after = steps["before"], steps["after"]
    assert {p for p in before if p not in after} == {p for p in before if _under(p, DELETED)}
    for kept in ("serving/imagepipe/300/saved_model.pb", "tfx/imagepipe/run-c/Trainer/model/"
                 "data.bin", "tfx/imagepipe/run-d/ImageExampleGen/examples/data.bin",
                 "tfx/ImageExampleGen/spans/classes.json", "tflite/imagepipe/CURRENT",
                 "serving/models.config"):
        assert kept in after


def test_the_json_record_is_written_to_the_bucket_with_sizes_and_reasons(steps):
    record = steps["record"]
    assert record["deleted"] is True and record["versions_kept"] == [200, 300]
    assert sorted(e["path"] for e in record["delete"]) == sorted(
        f"{ROOT}/{p.rstrip('/')}" for p in DELETED)
    totals = record["totals"]
    assert totals["delete"] == sum(s for p, s in steps["before"].items() if _under(p, DELETED))
    assert totals["kept"] == totals["before"] - totals["delete"]


def test_the_lock_object_is_given_back_and_nothing_is_made_on_this_machine(steps):
    assert not steps["lock_left"] and not steps["state_folders"]
    assert "nothing to delete" in exited(steps["again"])["stdout"]


def test_a_root_no_run_wrote_to_exits_2_naming_output(steps):
    assert "--output gs://imagepipe-test/typo" in exited(steps["no_root"], 2)["stderr"]
