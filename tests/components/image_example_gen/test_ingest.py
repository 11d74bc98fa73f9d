"""split_index and ingest_report: the pure parts of the Beam ingestion."""
import random

from components.image_example_gen.readers.folder_tree import ImageFile, Listing
from components.image_example_gen.ingest import ingest_report, split_index


def test_split_depends_only_on_the_path():
    paths = [f"c{i % 7}/{i}.png" for i in range(2000)]
    first = {p: split_index(p, [80, 100]) for p in paths}
    random.Random(1).shuffle(paths)
    assert {p: split_index(p, [80, 100]) for p in paths} == first


def test_split_ratio_follows_the_buckets():
    eval_share = sum(split_index(f"c/{i}.png", [80, 100]) for i in range(5000)) / 5000
    assert 0.18 < eval_share < 0.22


def test_report_counts_per_split_and_class():
    listing = Listing(classes=["a", "b"], files=[ImageFile("a/1", 0)], ignored=3,
                      empty_classes=["z"])
    facts = [(("train", 0, "a", "8x8x1", 2, 1), 5), (("eval", 1, "b", "8x8x1", 2, 1), 2),
             (("train", 1, "b", "4x4x3", 9, 0), 1)]
    report = ingest_report(listing, facts, [{"path": "b/x", "reason": "empty file"}])
    assert report["splits"] == {"train": 6, "eval": 2}
    assert report["per_class"] == {"train": {"a": 5, "b": 1}, "eval": {"a": 0, "b": 2}}
    assert report["shapes"]["most_common"] == {"8x8x1": 7, "4x4x3": 1}
    assert report["shapes"]["height"] == {"min": 4, "median": 8, "max": 8}
    assert (report["shapes"]["distinct"], report["shapes"]["channels"]) == (2, {"1": 7, "3": 1})
    assert report["skipped"] == [{"path": "b/x", "reason": "empty file"}]
    assert (report["ignored"], report["empty_classes"]) == (3, ["z"])


def test_report_derives_classes_when_the_listing_cannot_know_them():
    facts = [(("train", 2, "2", "8x8x1", 0, 1), 1), (("eval", 0, "0", "8x8x1", 0, 1), 1)]
    report = ingest_report(Listing(classes=None, format="tfrecord"), facts, [])
    assert report["classes"] == ["0", "1", "2"]
    assert report["per_class"]["train"] == {"0": 0, "1": 0, "2": 1}
    assert report["format"] == "tfrecord"


def test_report_counts_brightness_buckets_and_grayscale_overall_and_per_split():
    facts = [(("train", 0, "a", "8x8x1", 2, 1), 5), (("eval", 1, "b", "8x8x1", 2, 1), 2),
             (("train", 1, "b", "4x4x3", 9, 0), 1), (("train", 0, "a", "4x4x3", 15, 0), 2)]
    pixels = ingest_report(Listing(classes=["a", "b"]), facts, [])["pixels"]
    assert pixels["brightness"] == [0, 0, 7] + [0] * 6 + [1] + [0] * 5 + [2]
    assert pixels["grayscale"] == 7
    # From bucket centres: (7 * 40 + 152 + 2 * 248) / 10.
    assert pixels["mean"] == 92.8
    train, eval_ = pixels["per_split"]["train"], pixels["per_split"]["eval"]
    assert (sum(train["brightness"]), train["grayscale"], train["mean"]) == (8, 5, 106.0)
    assert (eval_["brightness"][2], eval_["grayscale"], eval_["mean"]) == (2, 2, 40.0)


def test_pixels_of_a_split_without_examples_have_no_mean():
    facts = [(("train", 0, "a", "8x8x1", 3, 1), 4)]
    pixels = ingest_report(Listing(classes=["a"]), facts, [])["pixels"]
    assert pixels["per_split"]["eval"] == {"brightness": [0] * 16, "mean": None, "grayscale": 0}
    assert pixels["mean"] == 56.0
