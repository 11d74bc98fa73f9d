"""TFLite conversion: every quantization runs and matches the SavedModel; the gate refuses drift."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from components.image_pusher.tflite_publish import publish_tflite
from core.images import pixel_decoder
from components.tflite_converter import conversion as tflite, tflite_metadata
from components.tflite_converter.client_inputs import decoded_split, split_batches
from components.tflite_converter.settings import TFLiteSettings
from components.tflite_converter.staging import convert_into
from modules.networks.keras_model import compile_model
from modules.networks.small import build_cnn

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _metadata():
    """tflite-support's metadata reader, imported where a test needs it: without the
    package or libusb-1.0 those tests skip, and the others in this file still run."""
    return pytest.importorskip("tensorflow_lite_support.metadata.python.metadata")


def _data(seed=0, count=96):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    pixels = rng.uniform(0, 128, (count, 8, 8, 1)).astype(np.float32)
    pixels[labels == 1] += 100.0  # brighter images are class 1
    return pixels, labels


def _saved_model(path, flip: bool = False) -> str:
    """A trained CNN with the trainer's serving_tensor signature (normalization inside);
    `flip` trains it on the wrong labels, a model sure to classify worse."""
    model = compile_model(build_cnn((8, 8, 1), 2), "adam", 1e-2, 1)
    pixels, labels = _data(seed=1)
    labels = 1 - labels if flip else labels
    model.fit((pixels / 255.0 - 0.5) / 0.3, np.eye(2)[labels], epochs=20, batch_size=16, verbose=0)
    names = tf.constant(["dark", "bright"])

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 1], tf.float32, name="pixels")])
    def serve(pixels):
        probabilities = model((pixels / 255.0 - 0.5) / 0.3, training=False)
        class_id = tf.argmax(probabilities, axis=-1)
        return {"probabilities": probabilities, "class_id": class_id,
                "class_name": tf.gather(names, class_id)}

    model.save(str(path), save_format="tf", signatures={tflite.SIGNATURE: serve})
    return str(path)


def _encoded(pixels):
    """PNG files of float pixels, as the gate reads an eval split's images."""
    return [tf.io.encode_png(np.round(image).astype(np.uint8)).numpy() for image in pixels]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return _saved_model(tmp_path_factory.mktemp("sm") / "model")


@pytest.mark.parametrize("quantize, atol", [("none", 1e-5), ("float16", 1e-2),
                                            ("dynamic", 0.05), ("int8", 0.1)])
def test_each_quantization_converts_and_matches_the_saved_model(trained, quantize, atol):
    pixels, labels = _data()
    model = tflite.convert(trained, quantize, representative=pixels[:32])
    got = tflite.tflite_probabilities(model, pixels)
    want = tflite.saved_model_probabilities(trained, pixels)
    np.testing.assert_allclose(got, want, atol=atol)
    encoded = _encoded(pixels)
    result = tflite.parity(trained, model, [(encoded[:40], labels[:40]),
                                            (encoded[40:], labels[40:])], tolerance=0.01)
    assert result["ok"] and result["saved_model_accuracy"] > 0.9, result


def test_quantized_files_are_smaller(trained):
    sizes = {q: len(tflite.convert(trained, q, representative=_data()[0][:16]))
             for q in ("none", "float16", "int8")}
    assert sizes["int8"] < 0.35 * sizes["none"] and sizes["float16"] < 0.6 * sizes["none"]


def test_the_converted_graph_has_only_numeric_tensors_so_xnnpack_can_take_it(trained):
    # One string tensor (class_name) made the interpreter skip XNNPACK for the
    # whole graph; the int8 digit model then ran 2.2x slower.
    model = tflite.convert(trained, "int8", representative=_data()[0][:16])
    runner = tflite.Runner(model)
    details = runner._interpreter.get_tensor_details()
    assert not [d["name"] for d in details if d["dtype"] in (np.object_, np.bytes_)]
    pixels, _ = _data()
    outputs = runner(pixels[:3])
    # Only float scores: LiteRT's and MediaPipe's image classifiers refuse any other output.
    assert set(outputs) == {"probabilities"} and outputs["probabilities"].shape == (3, 2)
    assert runner(pixels[:1])["probabilities"].shape == (1, 2)  # resized back down


@pytest.mark.parametrize("level, shown", [("3", False), ("0", True)])
def test_converter_chatter_is_held_back_only_in_quiet_mode(trained, capfd, monkeypatch,
                                                           level, shown):
    # The MLIR converter prints this line straight to fd 2, past Python's logging.
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
    capfd.readouterr()
    tflite.convert(trained, "int8", representative=_data()[0][:8])
    assert ("fully_quantize" in capfd.readouterr().err) is shown


def test_the_gate_refuses_a_conversion_that_classifies_worse(trained, tmp_path):
    pixels, labels = _data()
    # Not an untrained model: its random weights may well rank brightness the right way.
    worse = tflite.convert(_saved_model(tmp_path / "flipped", flip=True), "none")
    result = tflite.parity(trained, worse, [(_encoded(pixels), labels)], tolerance=0.01)
    assert not result["ok"] and result["drop"] > 0.01


def test_a_fallback_reuses_the_saved_models_classes_from_the_first_attempt(trained, tmp_path):
    pixels, labels = _data()
    encoded = _encoded(pixels)
    batches = [(encoded[:40], labels[:40]), (encoded[40:], labels[40:])]
    known = []
    first = tflite.parity(trained, tflite.convert(trained, "float16"), batches, 0.01, known)
    assert [len(k) for k in known] == [40, len(pixels) - 40]
    # No SavedModel is loaded the second time: its folder may as well be gone.
    second = tflite.parity(str(tmp_path / "absent"), tflite.convert(trained, "none"), batches,
                           0.01, known)
    assert second["saved_model_accuracy"] == first["saved_model_accuracy"] > 0.9
    assert len(known) == 2 and second["ok"]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="--quantize must be one of none, dynamic"):
        tflite.convert("unused", "int4")
    with pytest.raises(ValueError, match="representative"):
        tflite.convert("unused", "int8")


def _examples_artifact(tmp_path, make_image, side=8):
    """An ingested examples folder in TFX's layout (Split-train, Split-eval)."""
    from tests.support.transformed import ingest
    out, _ = ingest(tmp_path, make_image, channels=1, side=side)
    for split in ("train", "eval"):
        os.rename(os.path.join(out, split), os.path.join(out, f"Split-{split}"))
    return out


def _with_assets(saved_model: str) -> str:
    extra = os.path.join(saved_model, "assets.extra")
    os.makedirs(extra, exist_ok=True)
    with open(os.path.join(extra, "labels.txt"), "w") as f:
        f.write("dark\nbright\n")
    with open(os.path.join(extra, "normalization.json"), "w") as f:
        json.dump({"mean": [0.5], "std": [0.3]}, f)
    return saved_model


def _convert(model, examples, out, quantize, tolerance):
    return convert_into(model, examples, str(out), TFLiteSettings("digits", quantize, tolerance),
                        source="7")


def test_a_conversion_writes_its_files_or_nothing_and_publishes_as_a_version(
        trained, tmp_path, make_image, monkeypatch):
    examples, model = _examples_artifact(tmp_path, make_image), _with_assets(trained)
    result = _convert(model, examples, tmp_path / "converted", "dynamic", 0.01)
    assert result["converted"] and result["parity"]["ok"]
    base = tmp_path / "tflite" / "digits"
    assert publish_tflite(str(tmp_path / "converted"), str(base), 7,
                          {"model_card.json": b"{}"}) == str(base / "7")
    assert sorted(os.listdir(base / "7")) == ["labels.txt", "model.tflite", "model_card.json",
                                              "model_info.json"]
    info = json.loads((base / "7" / "model_info.json").read_text())
    assert info["input"]["shape"] == [8, 8, 1] and info["labels"] == ["dark", "bright"]
    # Images no larger than the model's side: no reduction inside, and the record says
    # what the gate measured (a client's decode and resize of each file).
    assert info["input"]["reduction"] == 1 and "Task Library" in info["parity"]["client_path"]
    assert (info["quantization"], info["source_version"]) == ("dynamic", 7)
    assert info["normalization"] == {"mean": [0.5], "std": [0.3]}
    assert info["metadata"]["embedded"] and result["metadata"]["embedded"]
    # The labels travel inside the file: an app needs no labels.txt beside it.
    displayer = _metadata().MetadataDisplayer.with_model_file(str(base / "7" / "model.tflite"))
    assert displayer.get_associated_file_buffer("labels.txt") == b"dark\nbright\n"
    assert json.loads(displayer.get_metadata_json())["name"] == "digits"
    # A gate no conversion can pass: nothing is written, and the reason says why.
    refused = _convert(model, examples, tmp_path / "refused", "none", -1.0)
    assert not refused["converted"] and "below the SavedModel's" in refused["reason"]
    assert not (tmp_path / "refused").exists()
    # Without libusb the writer's native module cannot load: converted all the same, and said.
    monkeypatch.setattr(tflite_metadata, "_writer", _missing_libusb)
    bare = _convert(model, examples, tmp_path / "bare", "none", 0.01)
    assert bare["converted"] and not bare["metadata"]["embedded"]
    reason = json.loads((tmp_path / "bare" / "model_info.json").read_text())["metadata"]["reason"]
    assert "libusb-1.0" in reason and "apt-get install libusb-1.0-0" in reason
    assert (tmp_path / "bare" / "labels.txt").read_text() == "dark\nbright\n"
    with pytest.raises(ValueError, match="does not have metadata"):
        _metadata().MetadataDisplayer.with_model_file(str(tmp_path / "bare" / "model.tflite"))


def test_a_conversion_that_loses_too_much_falls_back_to_heavier_ones(trained, tmp_path,
                                                                     make_image):
    examples, model = _examples_artifact(tmp_path, make_image), _with_assets(trained)
    # A gate none can pass: every conversion from int8 to float32 is tried, none written.
    refused = _convert(model, examples, tmp_path / "refused", "int8", -1.0)
    assert [t["quantize"] for t in refused["tried"]] == ["int8", "dynamic", "float16", "none"]
    assert not refused["converted"] and not (tmp_path / "refused").exists()
    assert all(f"{t['quantize']} lost" in refused["reason"] for t in refused["tried"])
    # No loss allowed: the first that loses nothing ships, and says what it is.
    kept = _convert(model, examples, tmp_path / "kept", "int8", 0.0)
    tried = kept["tried"]
    assert kept["converted"] and tried[-1]["quantize"] == kept["quantize"]
    assert all(t["drop"] > 0 for t in tried[:-1]) and tried[-1]["drop"] <= 0
    info = json.loads((tmp_path / "kept" / "model_info.json").read_text())
    assert info["quantization"] == kept["quantize"] and info["tried"] == tried
    if len(tried) > 1:
        assert kept["reason"].startswith(f"{kept['quantize']} passed the parity gate where int8")


def test_images_larger_than_the_model_are_taken_whole_and_shrunk_inside(trained, tmp_path,
                                                                        make_image):
    examples, model = _examples_artifact(tmp_path, make_image, side=24), _with_assets(trained)
    # Tolerance 1: random images, any accuracy passes; the file's input is what is checked.
    result = _convert(model, examples, tmp_path / "big", "none", 1.0)
    info = json.loads((tmp_path / "big" / "model_info.json").read_text())
    assert info["input"]["shape"] == [24, 24, 1] and info["input"]["reduction"] == 3
    assert "shrinks it 3x" in info["input"]["preprocessing"]
    assert "24x24" in result["parity"]["client_path"] == info["parity"]["client_path"]
    # The file is the SavedModel behind Transform's antialiased resize.
    pixels = np.random.default_rng(5).uniform(0, 255, (6, 24, 24, 1)).astype(np.float32)
    small = tf.image.resize(pixels, [8, 8], antialias=True).numpy()
    got = tflite.tflite_probabilities((tmp_path / "big" / "model.tflite").read_bytes(), pixels)
    want = tflite.saved_model_probabilities(trained, small)
    plain = tflite.saved_model_probabilities(
        trained, tf.image.resize(pixels, [8, 8], antialias=False).numpy())
    # float32 kernels differ between TFLite and TensorFlow (a fresh clone's run measured
    # 4e-5 apart); a resize without antialiasing is up to 1.0 apart on these pixels.
    np.testing.assert_allclose(got, want, atol=1e-3)
    assert np.abs(got - plain).max() > 0.05


def _missing_libusb():
    raise ImportError("libusb-1.0.so.0: cannot open shared object file: No such file or "
                      "directory")


@pytest.mark.parametrize("quantize", ["none", "int8"])
def test_the_packed_file_carries_its_labels_and_identity_normalization(trained, quantize):
    # The graph normalizes inside and int8 keeps a float32 input: every conversion
    # wants raw [0, 255] pixels, so the metadata's normalization is (x - 0) / 1.
    pixels, _ = _data()
    model = tflite.convert(trained, quantize, representative=pixels[:16])
    packed, record = tflite_metadata.embed_metadata(model, ["dark", "bright"], "digits", 3,
                                                    quantize, channels=1)
    assert record["embedded"], record
    displayer = _metadata().MetadataDisplayer.with_model_buffer(packed)
    assert displayer.get_packed_associated_file_list() == ["labels.txt"]
    assert displayer.get_associated_file_buffer("labels.txt") == b"dark\nbright\n"
    described = json.loads(displayer.get_metadata_json())
    assert (described["name"], described["version"]) == ("digits", "3")
    graph = described["subgraph_metadata"][0]
    pixels_md, scores_md = graph["input_tensor_metadata"][0], graph["output_tensor_metadata"][0]
    assert pixels_md["content"]["content_properties"] == {"color_space": "GRAYSCALE"}
    assert pixels_md["process_units"][0]["options"] == {"mean": [0.0], "std": [1.0]}
    assert pixels_md["stats"] == {"max": [255.0], "min": [0.0]}
    assert scores_md["associated_files"][0]["type"] == "TENSOR_AXIS_LABELS"
    # Metadata is a buffer beside the graph: the interpreter computes the same numbers.
    np.testing.assert_array_equal(tflite.tflite_probabilities(packed, pixels),
                                  tflite.tflite_probabilities(model, pixels))


def test_an_rgb_model_is_described_as_rgb(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Input((4, 4, 3)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(2, activation="softmax")])

    @tf.function(input_signature=[tf.TensorSpec([None, 4, 4, 3], tf.float32, name="pixels")])
    def serve(pixels):
        return {"probabilities": model(pixels / 255.0)}

    model.save(str(tmp_path / "rgb"), save_format="tf", signatures={tflite.SIGNATURE: serve})
    packed, _ = tflite_metadata.embed_metadata(tflite.convert(str(tmp_path / "rgb"), "none"),
                                               ["a", "b"], "rgb", 1, "none", channels=3)
    described = json.loads(_metadata().MetadataDisplayer.with_model_buffer(packed)
                           .get_metadata_json())
    pixels_md = described["subgraph_metadata"][0]["input_tensor_metadata"][0]
    assert pixels_md["content"]["content_properties"] == {"color_space": "RGB"}


def test_a_writer_that_cannot_load_leaves_the_model_as_it_was_and_says_why(monkeypatch):
    monkeypatch.setattr(tflite_metadata, "_writer", _missing_libusb)
    model, record = tflite_metadata.embed_metadata(b"model", ["a"], "m", 1, "none", 3)
    assert model == b"model" and record["embedded"] is False
    assert "apt-get install libusb-1.0-0" in record["reason"]

    def not_installed():
        raise ImportError("No module named 'tensorflow_lite_support'")

    monkeypatch.setattr(tflite_metadata, "_writer", not_installed)
    _, record = tflite_metadata.embed_metadata(b"model", ["a"], "m", 1, "none", 3)
    assert "pip install --no-deps tflite-support==0.4.4" in record["reason"]


def test_held_back_output_is_shown_when_the_conversion_fails(capfd, monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    with pytest.raises(RuntimeError, match="converter broke"):
        with tflite._native_stderr_captured():
            os.write(2, b"error: op not supported\n")  # as the C++ converter would
            raise RuntimeError("converter broke")
    assert "error: op not supported" in capfd.readouterr().err


def test_a_split_is_read_in_batches_in_order_and_up_to_the_limit(tmp_path):
    from core.contract import IMAGE_KEY, LABEL_KEY
    images = np.random.default_rng(3).integers(0, 256, (150, 8, 8, 1), dtype=np.uint8)
    split = tmp_path / "Split-eval"
    split.mkdir()
    with tf.io.TFRecordWriter(str(split / "data.gz"), options="GZIP") as writer:
        for i, image in enumerate(images):
            png = tf.io.encode_png(image).numpy()
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                IMAGE_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
                LABEL_KEY: tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 7])),
            })).SerializeToString())
    batches = list(split_batches(str(split)))
    assert [len(labels) for _, labels in batches] == [64, 64, 22]  # the gate's memory: 64 images
    labels = np.concatenate([labels for _, labels in batches])
    assert labels.tolist() == [i % 7 for i in range(150)]
    assert batches[0][0][0] == tf.io.encode_png(images[0]).numpy()  # the file's own bytes
    pixels, _ = decoded_split(str(split), pixel_decoder(8, 1), limit=70)
    assert pixels.shape == (70, 8, 8, 1)
    np.testing.assert_allclose(pixels, images[:70], atol=1e-3)  # same size: no resampling
    assert [len(b[1]) for b in split_batches(str(split), limit=64)] == [64]
