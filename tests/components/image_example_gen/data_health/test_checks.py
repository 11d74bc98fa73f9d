"""leakage, imbalance, slices, the groups CSV and the report section."""
import pytest

from core.contract import ASPECT_SLICE_KEY, COLOR_SLICE_KEY, GROUP_KEY, SIZE_SLICE_KEY
from components.image_example_gen.data_health import report
from components.image_example_gen.data_health.groups import HealthItem
from components.image_example_gen.data_health.groups_csv import groups_digest, read_groups
from components.image_example_gen.data_health.imbalance import imbalance
from components.image_example_gen.data_health.leakage import leaked_pairs
from components.image_example_gen.data_health.slices import aspect_slice, size_slice, slice_features


def _items():
    return [HealthItem("a/1.png", "x", 0, "train", "a"),
            HealthItem("a/2.png", "x", 0, "eval", "a"),
            HealthItem("b/1.png", "y", 0xFF00, "train", "b"),
            HealthItem("b/2.png", "z", 0xFF01, "eval", "a"),
            HealthItem("b/3.png", "q", 2**63 - 1, "eval", "b"),
            HealthItem("c/1.png", "s", None, "eval", "b"),
            HealthItem("c/2.png", "t", None, "train", "b")]


def test_eval_images_with_train_copies_are_leaked():
    assert leaked_pairs(_items()) == [
        {"eval": "a/2.png", "train": ["a/1.png"], "kind": "exact"},
        {"eval": "b/2.png", "train": ["b/1.png"], "kind": "near"}]


def test_imbalance_ratio_tiny_classes_and_remedy():
    assert imbalance({"a": 100, "b": 100}) == {"ratio": 1.0, "tiny_classes": [],
                                               "remedy": "none"}
    found = imbalance({"a": 400, "b": 100, "c": 100, "d": 5})
    assert found == {"ratio": 80.0, "tiny_classes": ["d"], "remedy": "class weights"}
    assert imbalance({"a": 30, "b": 0})["remedy"] == "class weights"


def test_slices_of_size_colour_and_aspect():
    assert [size_slice(h, 10) for h in (64, 65, 1024, 1025)] == [
        "<=64px", "65-256px", "257-1024px", ">1024px"]
    assert [aspect_slice(100, w) for w in (50, 95, 109, 200)] == [
        "portrait", "square", "square", "landscape"]
    features = slice_features(28, 28, 1)
    assert features == {SIZE_SLICE_KEY: b"<=64px", COLOR_SLICE_KEY: b"grayscale",
                        ASPECT_SLICE_KEY: b"square"}
    assert slice_features(10, 20, 0, "site-3")[GROUP_KEY] == b"site-3"


def test_groups_csv_with_or_without_header(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("path,group\na/1.png,p1\n\nb/1.png, p2\n")
    assert read_groups(str(path), {"a/1.png", "b/1.png"}) == {"a/1.png": "p1", "b/1.png": "p2"}
    path.write_text("a/1.png,p1\n")
    assert read_groups(str(path)) == {"a/1.png": "p1"}
    before = groups_digest(str(path))
    path.write_text("a/1.png,p2\n")
    assert groups_digest(str(path)) != before and groups_digest(None) == ""


@pytest.mark.parametrize("text, message", [
    ("a/1.png,p1\nb/1.png\n", "line 2: expected `path,group`"),
    ("a/1.png,p1\nz.png,p2\n", "line 2: z.png is not an image of the data"),
    ("a/1.png,p1\na/1.png,p2\n", "line 2: a/1.png is given two groups")])
def test_bad_groups_csv_names_file_and_line(tmp_path, text, message):
    path = tmp_path / "g.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        read_groups(str(path), {"a/1.png"})
    assert str(path) in str(error.value)
    with pytest.raises(ValueError, match="cannot read"):
        read_groups(str(tmp_path / "missing.csv"))


def test_report_section_shape_and_dedupe(monkeypatch):
    section, dropped = report.data_health(_items(), dedupe=True, classes=["a", "b", "c"])
    assert set(section) == {"images", "duplicates", "label_conflicts", "leakage",
                            "class_counts", "imbalance", "dropped", "counts", "truncated"}
    assert section["duplicates"] == [
        {"kind": "exact", "paths": ["a/1.png", "a/2.png"], "labels": ["a", "a"]},
        {"kind": "near", "paths": ["b/1.png", "b/2.png"], "labels": ["b", "a"]}]
    assert section["label_conflicts"] == section["duplicates"][1:]
    assert section["leakage"]["count"] == 2 and section["leakage"]["share"] == 0.5
    assert dropped == {"a/2.png", "b/1.png", "b/2.png"} == set(section["dropped"])
    assert section["class_counts"] == {"a": 1, "b": 3, "c": 0}
    assert section["counts"] == {"exact_groups": 1, "near_groups": 1, "duplicate_images": 2,
                                 "conflict_groups": 1, "leaked": 2, "dropped": 3}
    assert "a/1.png, a/2.png, b/1.png, b/2.png" in report.problems(section)
    monkeypatch.setattr(report, "MAX_LISTED", 1)
    capped, kept = report.data_health(_items(), dedupe=False)
    assert capped["truncated"] and len(capped["duplicates"]) == 1 and not kept
    assert capped["counts"]["exact_groups"] == 1 and capped["dropped"] == []
    assert len(capped["leakage"]["pairs"]) == 1
    assert capped["leakage"]["eval_paths"] == ["a/2.png", "b/2.png"]  # never capped


def test_many_identical_images_share_their_lists_and_the_report_names_a_few():
    """Blank images (one perceptual hash, different bytes) in both splits: every eval one
    leaks, its pair shares one train list, and the report lists a few copies of each."""
    items = [HealthItem(f"blank/{i:04d}.png", f"c{i}", 0, ("train", "eval")[i % 4 == 0], "a")
             for i in range(400)]
    pairs = leaked_pairs(items)
    assert len(pairs) == 100 and all(p["train"] is pairs[0]["train"] for p in pairs)
    assert len(pairs[0]["train"]) == 300 and pairs[0]["kind"] == "near"
    section, dropped = report.data_health(items, dedupe=True)
    assert section["counts"]["near_groups"] == 1 and len(dropped) == 399
    listed = section["leakage"]["pairs"][0]
    assert len(listed["train"]) == report.MAX_COPIES_LISTED and listed["copies"] == 300
    assert section["truncated"] and len(section["leakage"]["eval_paths"]) == 100
