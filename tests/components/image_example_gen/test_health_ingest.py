"""Data health in ingestion: the report section, slice and group features, --dedupe, --strict."""
import json

import pytest

from core.contract import (ASPECT_SLICE_KEY, COLOR_SLICE_KEY, DATA_HEALTH_KEY,
                           FILENAME_KEY, GROUP_KEY, SIZE_SLICE_KEY)
from components.image_example_gen.data_health.groups import HealthItem
from components.image_example_gen.data_health import report
from components.image_example_gen.data_health.report import data_health
from components.image_example_gen.health import HASHES_FILE, window_health
from components.image_example_gen.ingest import finish_ingest

from tests.support.examples import ingest_folder, read_split

pytestmark = pytest.mark.integration  # real Beam and TensorFlow work


@pytest.fixture
def data(tmp_path, make_image):
    root = tmp_path / "data"
    for i in range(5):
        make_image(root / "a" / f"{i}.png", size=(24, 16), seed=i)
        make_image(root / "b" / f"{i}.png", size=(16, 16), mode="L", seed=20 + i)
    (root / "a" / "copy.png").write_bytes((root / "a" / "0.png").read_bytes())
    (root / "b" / "conflict.png").write_bytes((root / "a" / "1.png").read_bytes())
    (tmp_path / "groups.csv").write_text("path,group\na/2.png,site-1\nb/3.png,site-2\n")
    return root


def _examples(uri):
    examples = read_split(uri, "train") + read_split(uri, "eval")
    return {e.features.feature[FILENAME_KEY].bytes_list.value[0].decode(): e.features.feature
            for e in examples}


def test_ingestion_reports_health_and_writes_slices_and_groups(tmp_path, data):
    out = tmp_path / "out"
    ingest_folder(data, out, groups=str(tmp_path / "groups.csv"))
    health = json.loads((out / "ingest_report.json").read_text())[DATA_HEALTH_KEY]
    assert health["images"] == 12 and health["dropped"] == []
    assert [g["paths"] for g in health["duplicates"]] == [["a/0.png", "a/copy.png"],
                                                          ["a/1.png", "b/conflict.png"]]
    assert health["counts"]["conflict_groups"] == 1
    assert health["class_counts"] == {"a": 6, "b": 6}
    features = _examples(str(out))
    assert len(features) == 12 and len((out / HASHES_FILE).read_text().splitlines()) == 12
    assert features["a/2.png"][GROUP_KEY].bytes_list.value == [b"site-1"]
    assert GROUP_KEY not in features["a/3.png"]
    assert features["a/3.png"][SIZE_SLICE_KEY].bytes_list.value == [b"<=64px"]
    assert features["a/3.png"][ASPECT_SLICE_KEY].bytes_list.value == [b"landscape"]
    assert features["b/3.png"][COLOR_SLICE_KEY].bytes_list.value == [b"grayscale"]
    with pytest.raises(ValueError, match="--strict: the data has copies.*a/0.png"):
        finish_ingest(str(out), strict=True)


def test_dedupe_drops_later_copies_and_conflicting_groups(tmp_path, data):
    out = tmp_path / "out"
    ingest_folder(data, out, dedupe=True)
    report = json.loads((out / "ingest_report.json").read_text())
    dropped = ["a/1.png", "a/copy.png", "b/conflict.png"]
    assert report[DATA_HEALTH_KEY]["dropped"] == dropped
    assert sorted(_examples(str(out))) == sorted(
        {f"{c}/{i}.png" for c in "ab" for i in range(5)} - set(dropped))
    assert sum(report["splits"].values()) == 9
    assert report[DATA_HEALTH_KEY]["class_counts"] == {"a": 4, "b": 5}
    assert not list(out.rglob("*.tmp"))


def test_a_bad_groups_file_fails_before_ingesting(tmp_path, data):
    (tmp_path / "groups.csv").write_text("a/2.png,site-1\nnot/there.png,site-2\n")
    with pytest.raises(ValueError, match="groups.csv, line 2: not/there.png"):
        ingest_folder(data, tmp_path / "out", groups=str(tmp_path / "groups.csv"))


def test_window_leakage_is_the_newest_eval_against_every_span_train():
    far, other = 0xFFFFFFFF00000000, 0xFFFFFFFF  # 32 bits from 0, 64 from each other
    old = [HealthItem("a/1.png", "x", 0, "train", "a"),
           HealthItem("a/2.png", "y", far, "eval", "a")]
    new = [HealthItem("a/3.png", "x", 0, "eval", "a"),
           HealthItem("a/4.png", "z", other, "train", "a"),
           HealthItem("a/5.png", "y", far, "eval", "a")]  # a/5's copy is old eval: no leak
    sections = [data_health(old, False)[0], data_health(new, False)[0]]
    per_class = {"train": {"a": 2}, "eval": {"a": 2}}
    health = window_health(sections, per_class, [old, new], newest=1)
    assert health["leakage"]["pairs"] == [
        {"eval": "a/3.png", "train": ["a/1.png"], "kind": "exact", "copies": 1}]
    assert health["counts"]["leaked"] == 1 and health["class_counts"] == {"a": 4}
    assert health["images"] == 5 and sections[1]["leakage"]["count"] == 0
    assert window_health(sections, per_class, [None, new], 1)["leakage"] == sections[1]["leakage"]
    assert not health["truncated"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report, "MAX_COPIES_LISTED", 0)  # the window's listed pair is cut
        assert window_health(sections, per_class, [old, new], newest=1)["truncated"]
