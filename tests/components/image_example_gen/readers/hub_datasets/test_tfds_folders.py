"""TFDS prepared folders, read without tensorflow_datasets: listing, records read back,
bad records, array_record refused.

The folders are written here from the bundled digits to TFDS's documented format
(dataset_info.json, features.json, label.labels.txt, tf.Example shards:
tests/support/foreign_datasets.py): tensorflow-datasets itself cannot be installed beside
the pinned stack, and its writer needs TensorFlow (test_hf_real_tools.py says more).
"""
import json

import pytest

from components.image_example_gen.readers.hub_datasets import tfds_folders
from components.image_example_gen.readers.folder_tree import DatasetError, splits_hashed
from settings.config import PipelineConfig
from tests.support import foreign_datasets as fd

OPTIONS = PipelineConfig.from_values().ingest_options()


def read_all(listing, root):
    """fd.read_all through this reader."""
    return fd.read_all(listing, root, tfds_folders.read_tfds_unit, OPTIONS)


@pytest.mark.parametrize("level", ["name", "config", "version"])
def test_splits_class_names_and_records_come_from_the_folder(tmp_path, level):
    splits = {"train": fd.digit_rows(4), "validation": fd.digit_rows(2, 4),
              "test": fd.digit_rows(1, 6)}
    version = fd.write_tfds(tmp_path, splits)
    root = {"name": tmp_path / "digits", "config": version.parent, "version": version}[level]
    assert tfds_folders.looks_like_tfds(str(root)) == (level != "name")  # configs: --format
    listing = tfds_folders.list_tfds(str(root), OPTIONS)
    assert listing.classes == list(fd.NAMES) and listing.format == "tfds"
    assert listing.unused == ["test"] and not splits_hashed(listing)
    assert [(u.split, u.stop) for u in listing.files] == [("train", 6), ("train", 6),
                                                          ("eval", 3), ("eval", 3)]
    examples, skipped = read_all(listing, root)
    assert not skipped and len(examples) == 18
    prefix = {"name": "plain/1.0.0/", "config": "1.0.0/", "version": ""}[level]
    for shard in range(2):
        for index, (data, label) in enumerate(splits["validation"][shard::2]):
            relpath = f"{prefix}digits-validation.tfrecord-{shard:05d}-of-00002#{index}"
            assert examples[relpath] == ("eval", label, fd.NAMES[label], data)


def test_one_split_is_hashed(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(2)})
    listing = tfds_folders.list_tfds(str(version), OPTIONS)
    assert splits_hashed(listing) and not listing.unused
    examples, _ = read_all(listing, version)
    assert {split for split, *_ in examples.values()} == {"hashed"}


def test_bad_image_and_undeclared_label_are_skipped_naming_shard_and_record(tmp_path):
    rows = fd.digit_rows(1)
    rows[0] = (b"not an image", 0)
    rows[1] = (rows[1][0], 3)
    version = fd.write_tfds(tmp_path, {"train": rows}, shards=1)
    examples, skipped = read_all(tfds_folders.list_tfds(str(version), OPTIONS), version)
    shard = "digits-train.tfrecord-00000-of-00001"
    assert list(examples) == [f"{shard}#2"]
    assert [s["path"] for s in skipped] == [f"{shard}#0", f"{shard}#1"]
    assert skipped[0]["reason"].startswith("cannot decode")
    assert "label 3 is not one of the dataset's 3 classes" in skipped[1]["reason"]


def test_a_truncated_shard_keeps_its_whole_records(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(2)}, shards=1)
    shard = version / "digits-train.tfrecord-00000-of-00001"
    shard.write_bytes(shard.read_bytes()[:-40])
    examples, skipped = read_all(tfds_folders.list_tfds(str(version), OPTIONS), version)
    assert len(examples) == 5 and skipped[0]["path"].endswith("#5+")
    assert skipped[0]["reason"].startswith("unreadable TFRecord")


def test_array_record_folders_are_refused_saying_why(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(1)}, file_format="array_record")
    assert tfds_folders.looks_like_tfds(str(version))
    with pytest.raises(DatasetError, match=r"array_record shards cannot be read here .*"
                                           r"file_format='tfrecord'"):
        tfds_folders.list_tfds(str(version), OPTIONS)


def test_without_labels_file_the_class_count_gives_the_names(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(1)})
    (version / "label.labels.txt").unlink()
    assert tfds_folders.list_tfds(str(version), OPTIONS).classes == ["0", "1", "2"]


def test_older_features_json_is_read(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(1)})
    prefix = "tensorflow_datasets.core.features."
    (version / "features.json").write_text(json.dumps({
        "type": prefix + "features_dict.FeaturesDict", "content": {
            "image": {"type": prefix + "image_feature.Image", "content": {"shape": [28, 28, 1]}},
            "label": {"type": prefix + "class_label_feature.ClassLabel",
                      "content": {"num_classes": 3}}}}))
    listing = tfds_folders.list_tfds(str(version), OPTIONS)
    assert listing.classes == list(fd.NAMES) and listing.files[0].image == "image"


def test_two_configs_need_one_named(tmp_path):
    version = fd.write_tfds(tmp_path, {"train": fd.digit_rows(1)})
    (version.parent.parent / "other").mkdir()
    import shutil
    shutil.copytree(version, version.parent.parent / "other" / "1.0.0")
    with pytest.raises(DatasetError, match="configs other, plain; point --data at one"):
        tfds_folders.list_tfds(str(tmp_path / "digits"), OPTIONS)


def test_class_folders_are_not_tfds(mnist_subset):
    assert not tfds_folders.looks_like_tfds(str(mnist_subset))


def test_sampled_images_are_the_first_records(tmp_path):
    rows = fd.digit_rows(1)
    version = fd.write_tfds(tmp_path, {"train": rows}, shards=1)
    listing = tfds_folders.list_tfds(str(version), OPTIONS)
    assert tfds_folders.sample_tfds_images(str(version), listing, 2) == [d for d, _ in rows[:2]]


def test_split_names_with_hyphens_are_read_whole(tmp_path):
    version = fd.write_tfds(tmp_path, {"train-clean": fd.digit_rows(1)})
    listing = tfds_folders.list_tfds(str(version), OPTIONS)
    assert [(u.split, u.stop) for u in listing.files] == [(None, 2), (None, 1)]
