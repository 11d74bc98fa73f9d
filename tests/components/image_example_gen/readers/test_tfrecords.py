"""TFRecord input: user-named keys, clear errors listing keys, truncated files."""
import io

import pytest
import tensorflow as tf
from PIL import Image

from components.image_example_gen.encoding.encode import pixel_stats
from components.image_example_gen.readers.folder_tree import DatasetError
from settings.config import PipelineConfig
from components.image_example_gen.readers.units import read_unit
from components.image_example_gen.readers.tfrecords import RecordFile, list_tfrecord

FOREIGN = PipelineConfig.from_values(image_key="img", label_key="lbl").ingest_options()


def _hash(relpath):
    return "hashed"


def _read(unit, root):
    return list(read_unit(unit, root, None, FOREIGN, _hash))


def _example(image: bytes, label: int) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "img": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
        "lbl": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        "note": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0])),
    })).SerializeToString()


def write_records(path, images, gzip=False):
    options = tf.io.TFRecordOptions(compression_type="GZIP" if gzip else "")
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for i, image in enumerate(images):
            writer.write(_example(image, i % 3))
    return path


@pytest.fixture
def pngs(tmp_path, make_image):
    return [make_image(tmp_path / f"{i}.png", seed=i).read_bytes() for i in range(6)]


@pytest.mark.parametrize("gzip", [False, True])
def test_foreign_keys_are_read_into_our_examples(tmp_path, pngs, gzip):
    (tmp_path / "in").mkdir()
    write_records(tmp_path / "in" / "part-0.tfrecord", pngs, gzip)
    listing = list_tfrecord(str(tmp_path / "in"), FOREIGN)
    assert listing.classes is None and listing.format == "tfrecord"
    items = _read(listing.files[0], str(tmp_path / "in"))
    assert len(items) == 6
    split, record, fact, _ = items[4]
    feature = tf.train.Example.FromString(record).features.feature
    assert split == "hashed"
    assert fact == ("hashed", 1, "1", "8x8x3", *pixel_stats(Image.open(io.BytesIO(pngs[4]))))
    assert feature["image/encoded"].bytes_list.value[0] == pngs[4]
    assert feature["image/class/label"].int64_list.value[0] == 1
    assert feature["image/filename"].bytes_list.value[0] == b"part-0.tfrecord#4"


def test_missing_key_error_lists_the_keys_that_exist(tmp_path, pngs):
    path = write_records(tmp_path / "x.tfrecord", pngs)
    with pytest.raises(DatasetError, match=r"--image-key 'image/encoded' .* have: img \(bytes\), "
                                           r"lbl \(int64\), note \(float\)"):
        list_tfrecord(str(path), PipelineConfig.from_values().ingest_options())


def test_truncated_file_keeps_whole_records_and_reports_the_rest(tmp_path, pngs):
    path = write_records(tmp_path / "x.tfrecord", pngs)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # cut inside the last record
    listing = list_tfrecord(str(path), FOREIGN)
    items = _read(listing.files[0], str(path))
    assert len([i for i in items if isinstance(i, tuple)]) == 5
    assert items[-1]["path"] == "x.tfrecord#5+"
    assert "unreadable TFRecord" in items[-1]["reason"]


def test_a_non_tfrecord_file_is_a_clear_error(tmp_path):
    (tmp_path / "x.tfrecord").write_bytes(b"definitely not a tfrecord file at all")
    with pytest.raises(DatasetError, match="x.tfrecord: not a readable TFRecord file"):
        list_tfrecord(str(tmp_path / "x.tfrecord"), FOREIGN)


def test_split_folders_of_record_files_keep_their_splits(tmp_path, pngs):
    for split in ("train", "eval"):
        (tmp_path / split).mkdir()
        write_records(tmp_path / split / "data-00000-of-00001.tfrecord.gz", pngs[:3], gzip=True)
    (tmp_path / "labels.txt").write_text("not a record file\n")
    listing = list_tfrecord(str(tmp_path), FOREIGN)
    assert [(u.path, u.split) for u in listing.files] == [
        ("train/data-00000-of-00001.tfrecord.gz", "train"),
        ("eval/data-00000-of-00001.tfrecord.gz", "eval")]
    splits = {item[0] for u in listing.files
              for item in _read(u, str(tmp_path))}
    assert splits == {"train", "eval"}


def test_a_file_cut_inside_its_first_record_reports_record_zero(tmp_path, pngs):
    path = write_records(tmp_path / "x.tfrecord", pngs[:1])
    path.write_bytes(path.read_bytes()[:30])  # header intact, data cut
    items = _read(RecordFile(""), str(path))
    assert items == [{"path": "x.tfrecord#0+", "reason": items[0]["reason"]}]
    assert "unreadable TFRecord" in items[0]["reason"]
