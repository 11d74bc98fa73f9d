"""`imagepipe versions` and `imagepipe rollback` on a compiled pipeline's push destination in
a real GCS server (fake-gcs-server, `scripts/with_gcs.sh`), and the next compiled run's
baseline step honouring the pin until a new push lifts it.

bucket_rollback_steps.py runs inside the server's namespace and writes what
each step returned and left in the bucket; the tests read it. The bucket
`locked` exists but refuses every request (HTTP 403).
"""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

STEPS = "tests.rollback.bucket_rollback_steps"
pytestmark = [pytest.mark.slow, NEEDS_ROOT]


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("bucket_rollback")
    found = run_steps(STEPS, work / "results.json", work, gcs_flags=("--deny-bucket", "locked"),
                      timeout=600)
    assert "error" not in found, found.get("traceback")
    return found


def _code(step: dict, code: int) -> dict:
    assert "Traceback" not in exited(step, code)["stderr"]
    return step


def test_versions_lists_the_pipeline_roots_pushes(steps):
    lines = _code(steps["versions"], 0)["stdout"].splitlines()
    assert lines[0] == "imagepipe in gs://imagepipe-test/root/serving/imagepipe"
    assert [line.split()[0] for line in lines[2:]] == ["100", "200", "300"]
    assert lines[-1].endswith("served")
    listing = steps["listing"]
    assert listing["served"] == 300 and listing["pinned"] is None
    assert [row["spans"] for row in listing["versions"]] == [[1], [2], [3]]


def test_rollback_pins_the_predecessor_in_the_bucket(steps):
    step = _code(steps["rollback"], 0)
    assert "serving version 200 (was 300)" in step["stdout"]
    assert "no local ML Metadata" in step["stdout"]
    assert "pause its recurring run" in step["stdout"]
    assert step["served"] == {"imagepipe": {"pinned": 200, "rolled_back": [300]}}
    assert "specific { versions: 200 }" in step["models_config"]
    assert 'base_path: "gs://imagepipe-test/root/serving/imagepipe"' in step["models_config"]
    assert step["current"] == 100  # 200 has no TFLite of its own
    assert not step["lock"]  # the lock object went with the rollback
    assert not steps["state_folders"]  # nothing of the output's on this machine


def test_the_compiled_baseline_step_picks_the_pinned_version(steps):
    assert steps["baseline"] == {"version": "200", "copied": True}


def test_a_second_rollback_honours_the_first_and_then_has_nothing_left(steps):
    step = _code(steps["to_oldest"], 0)
    assert step["served"] == {"imagepipe": {"pinned": 100, "rolled_back": [200, 300]}}
    assert "specific { versions: 100 }" in step["models_config"] and step["current"] == 100
    assert "nothing to roll back to" in _code(steps["nothing_left"], 2)["stderr"]


def test_a_new_push_lifts_the_pin_and_becomes_the_baseline(steps):
    push = steps["push"]
    assert push["pushed"] and push["version"] > 300
    assert push["served"] == {"imagepipe": {"pinned": None, "rolled_back": [200, 300]}}
    assert "specific" not in push["models_config"] and push["current"] == push["version"]
    assert steps["baseline_after_push"]["version"] == str(push["version"])
    # The new model's own re-run compares against the one before it; the rolled-back
    # versions stay out.
    assert steps["baseline_of_the_new"]["version"] == "100"


@pytest.mark.parametrize("step, words", [
    ("unknown_to", "--to 999: no such version in gs://imagepipe-test/root/serving/"),
    ("refused_bucket", "--output gs://locked/root: access refused (403)"),
])
def test_bad_input_exits_2_naming_the_flag(steps, step, words):
    assert words in _code(steps[step], 2)["stderr"]


def test_the_lock_object_turns_a_second_rollback_away(steps):
    assert "another imagepipe rollback is using it" in steps["locked"]["refused"]

