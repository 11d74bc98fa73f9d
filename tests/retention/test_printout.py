"""What `imagepipe gc` prints (retention/printout.py)."""
import pytest

from retention.inventory import ARTIFACT, VERSION, Unit
from retention.policy import Decision
from retention.printout import describe, human_size
from retention.sweep import GcPlan


@pytest.mark.parametrize("size, text", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                        (5 * 1024 ** 3, "5.0 GiB")])
def test_sizes_are_human_readable(size, text):
    assert human_size(size) == text


def _plan() -> GcPlan:
    kept = [Decision(Unit(f"/o/tfx/T/k/{i}", ARTIFACT, size=1024), True,
                     f"lineage of version 5 (run r{i})") for i in (1, 2)]
    return GcPlan(kept + [Decision(Unit("/o/serving/m/4", VERSION, size=2048, version=4),
                                   False, "older")], total=10240, versions=(5,), served=5)


def test_a_dry_run_counts_kept_artifacts_lists_deletions_and_says_nothing_was_deleted():
    lines = describe(_plan(), "/o", 1, "0", deleted=False).splitlines()
    assert lines[0].endswith("served version 5; keeping the 1 newest versions; no min age")
    assert lines[1].startswith("keep      2 artifacts") and "lineage of version 5" in lines[1]
    assert "(run" not in lines[1]
    assert lines[2].startswith("delete    version serving/m/4") and "2.0 KiB  older" in lines[2]
    assert lines[3] == "total     before 10.0 KiB, kept 8.0 KiB, to delete 2.0 KiB (1 folder)"
    assert lines[4].startswith("dry run   nothing was deleted")


def test_after_yes_it_says_what_was_deleted_and_marked():
    text = describe(_plan(), "/o", 1, "1d", deleted=True, marked=3)
    assert "min age 1d" in text and "deleted 2.0 KiB (1 folder)" in text
    assert text.endswith("deleted   1 folder; 3 ML Metadata record(s) marked DELETED")
