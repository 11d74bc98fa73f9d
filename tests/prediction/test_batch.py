"""`imagepipe predict --data`: sources, row formats, and real Beam runs on an exported model."""
import csv
import dataclasses
import json
import os
import shutil

import numpy as np
import pytest

from prediction import batch as batch_predict
from prediction import batch_io as io_
from settings.config import DEFAULT_MAX_PIXELS, PipelineConfig
from core.errors import PipelineFailed, UsageError
from tests.support.images import copy_images

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work

IMAGE_KEY = PipelineConfig.from_values().tfrecord.image_key
BEAM_ARGS = PipelineConfig.from_values().beam_pipeline_args


# --- Pure logic -------------------------------------------------------------

@pytest.mark.parametrize("name, kind", [("p.jsonl", "jsonl"), ("p.CSV", "csv")])
def test_the_output_extension_picks_the_format(name, kind):
    assert io_.output_kind(name) == kind


@pytest.mark.parametrize("name", ["p.json", "p.txt", "predictions"])
def test_any_other_output_extension_is_a_usage_error_naming_the_flag(name):
    with pytest.raises(UsageError, match=f"--output {name}: must end in .jsonl"):
        io_.output_kind(name)


def test_rows_format_as_json_lines_and_as_csv_with_top_k_as_json():
    row = io_.prediction_row("a, \"b\".png", np.array([0.25, 0.75], np.float32), ["x", "y"], 2)
    bad = io_.error_row("c.png", "cannot decode: truncated")
    assert json.loads(io_.format_row(row, "jsonl")) == row
    assert json.loads(io_.format_row(bad, "jsonl")) == bad
    lines = [io_.csv_header(), io_.format_row(row, "csv"), io_.format_row(bad, "csv")]
    parsed = list(csv.DictReader(lines))
    assert (parsed[0]["path"], parsed[0]["class"], parsed[0]["error"]) == (row["path"], "y", "")
    assert json.loads(parsed[0]["top_k"]) == [{"class": "y", "probability": 0.75},
                                              {"class": "x", "probability": 0.25}]
    assert (parsed[1]["class"], parsed[1]["top_k"], parsed[1]["error"]) == ("", "", bad["error"])


def test_image_files_are_found_recursively_in_order_skipping_hidden_and_others(tmp_path):
    for name in ("b/2.PNG", "b/1.jpg", "a.gif", ".hidden/3.png", "b/.4.png", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    found = [os.path.relpath(p, tmp_path) for p in io_.iter_image_paths(str(tmp_path))]
    assert found == ["a.gif", "b/1.jpg", "b/2.PNG"]


def test_the_source_is_images_or_tfrecords_and_bad_data_names_the_flag(tmp_path,
                                                                       exported_model):
    assert io_.source_kind(str(tmp_path / "x" / "*.tfrecord")) == "tfrecord"
    assert io_.source_kind(exported_model.examples_uri) == "tfrecord"
    assert io_.source_kind(os.path.dirname(os.path.dirname(exported_model.images[0]))) == \
        "folder"
    (tmp_path / "empty").mkdir()
    for data, words in ((tmp_path / "missing", "no such file"),
                        (tmp_path / "empty", "holds no image"),
                        (exported_model.images[0], "an image file")):
        with pytest.raises(UsageError, match=f"--data {data}: {words}"):
            io_.source_kind(str(data))
    with pytest.raises(UsageError, match="matches no TFRecord files"):
        io_.record_files(str(tmp_path / "empty" / "*.tfrecord"))


def test_remote_runners_get_the_setup_file_and_the_direct_runner_does_not():
    remote = batch_predict.pipeline_options(["--runner=DataflowRunner"]).get_all_options()
    assert remote["setup_file"].endswith("setup.py")
    assert batch_predict.pipeline_options(BEAM_ARGS).get_all_options()["setup_file"] is None


def test_shards_are_joined_in_order_under_one_header_and_removed(tmp_path):
    prefix = tmp_path / ".p.csv.tmp"
    for i, text in ((1, "c\nd\n"), (0, "a\nb\n")):
        (tmp_path / f".p.csv.tmp-{i:05d}-of-00002").write_text(text)
    batch_predict._join_shards(str(prefix), "h")
    assert prefix.read_text() == "h\na\nb\nc\nd\n"
    assert os.listdir(tmp_path) == [prefix.name]


def test_a_remote_model_is_a_version_folder_or_its_serving_base_folder():
    import tensorflow as tf
    tf.io.gfile.makedirs("ram://models/1")  # ram:// has no folders implied by their files
    with tf.io.gfile.GFile("ram://models/1/saved_model.pb", "wb") as f:
        f.write(b"")
    assert io_.saved_model_path("ram://models/1") == "ram://models/1"
    assert io_.saved_model_path("ram://models") == "ram://models/1"  # its newest version
    with pytest.raises(UsageError, match="--model ram://nothing: not a SavedModel folder"):
        io_.saved_model_path("ram://nothing")


def test_a_tflite_model_is_refused_naming_the_flag(tmp_path):
    (tmp_path / "model.tflite").write_bytes(b"")
    with pytest.raises(UsageError, match="--model .*model.tflite: batch prediction"):
        io_.plan_job(str(tmp_path / "model.tflite"), str(tmp_path), str(tmp_path / "p.csv"),
                     3, IMAGE_KEY)


# --- Real runs on the exported model ------------------------------------------

def _run(model, data, output, top_k=2, progress_s=60.0):
    job = io_.plan_job(str(model), str(data), str(output), top_k, IMAGE_KEY)
    job = dataclasses.replace(job, progress_s=progress_s)
    return batch_predict.run_batch_predict(job, BEAM_ARGS)


def _read_jsonl(path):
    with open(path) as f:
        return {row["path"]: row for row in map(json.loads, f)}


def _expected(model_dir, paths):
    from prediction.predict import Predictor
    predictor = Predictor(model_dir)
    return {str(p): predictor.probabilities(p.read_bytes()) for p in paths}


def _assert_same_probabilities(row, expected, labels):
    got = {entry["class"]: entry["probability"] for entry in row["top_k"]}
    np.testing.assert_allclose([got[label] for label in labels], expected, atol=1e-5)
    assert row["class"] == labels[int(np.argmax(expected))]
    assert row["probability"] == pytest.approx(float(np.max(expected)), abs=1e-5)


@pytest.fixture
def image_folder(tmp_path, exported_model):
    """The 12 source images (one level deeper), a corrupt PNG and a text file named .png."""
    folder = tmp_path / "images"
    for path in exported_model.images:
        target = folder / "deeper" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    (folder / "corrupt.png").write_bytes(exported_model.images[0].read_bytes()[:60])
    (folder / "notes.png").write_text("not an image")
    return folder


def test_each_image_gets_the_single_image_probabilities_and_bad_files_get_errors(
        tmp_path, exported_model, image_folder, capsys):
    output = tmp_path / "out" / "predictions.jsonl"
    output.parent.mkdir()
    assert _run(exported_model.model_dir, image_folder, output, progress_s=0) == (12, 2)
    rows = _read_jsonl(output)
    good = sorted((image_folder / "deeper").rglob("*.png"))
    for path, probabilities in _expected(exported_model.model_dir, good).items():
        _assert_same_probabilities(rows[path], probabilities, exported_model.labels)
    for name in ("corrupt.png", "notes.png"):
        row = rows[str(image_folder / name)]
        assert set(row) == {"path", "error"} and row["error"].startswith("cannot decode")
    assert len(rows) == 14 and os.listdir(output.parent) == ["predictions.jsonl"]
    assert "predict   " in capsys.readouterr().err  # progress lines, on stderr


def test_csv_output_has_a_header_and_a_row_per_image(tmp_path, exported_model, image_folder):
    output = tmp_path / "predictions.csv"
    _run(exported_model.model_dir, image_folder, output, top_k=1)
    with open(output, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(io_.CSV_COLUMNS) and len(rows) == 14
    ok = [r for r in rows if not r["error"]]
    assert len(ok) == 12 and all(r["class"] in exported_model.labels for r in ok)
    assert all(len(json.loads(r["top_k"])) == 1 for r in ok)


def test_an_image_only_the_models_decoder_refuses_fails_alone(tmp_path, exported_model):
    """A PNG without its end chunk passes PIL's check but not TensorFlow's decoder."""
    from components.image_example_gen.encoding.encode import decode_fully
    folder = copy_images(exported_model.images[:5], tmp_path / "images")
    cut = exported_model.images[5].read_bytes()[:-12]  # IEND is the last 12 bytes
    decode_fully(cut, DEFAULT_MAX_PIXELS)
    (folder / "cut.png").write_bytes(cut)
    assert _run(exported_model.model_dir, folder, tmp_path / "p.jsonl") == (5, 1)
    assert "in the model" in _read_jsonl(tmp_path / "p.jsonl")[str(folder / "cut.png")]["error"]


def test_tfrecords_are_read_with_the_ingested_file_names_as_paths(tmp_path, exported_model):
    output = tmp_path / "p.jsonl"
    assert _run(exported_model.model_dir, exported_model.examples_uri, output) == (12, 0)
    rows = _read_jsonl(output)
    root = exported_model.images[0].parent.parent
    expected = _expected(exported_model.model_dir, exported_model.images)
    for path, probabilities in expected.items():
        _assert_same_probabilities(rows[os.path.relpath(path, root)], probabilities,
                                   exported_model.labels)


def test_a_record_without_the_image_feature_is_an_error_row(tmp_path):
    import tensorflow as tf
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(tf.train.Example().SerializeToString())
        writer.write(b"not an example")
    rows = list(io_.iter_records(path, IMAGE_KEY))
    assert rows == [io_.error_row(f"{path}:0", f"no bytes feature {IMAGE_KEY!r} (--image-key)"),
                    io_.error_row(f"{path}:1", "record is not a tf.Example")]


def test_a_failed_run_leaves_no_output_and_no_temp_files(tmp_path, exported_model,
                                                         image_folder):
    model = tmp_path / "model"
    shutil.copytree(exported_model.model_dir, model)
    (model / "saved_model.pb").write_bytes(b"not a SavedModel")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(PipelineFailed, match="in predict"):
        _run(model, image_folder, out / "p.jsonl")
    assert os.listdir(out) == []
