"""The `prediction_log` reader on what TFX's BulkInferrer writes: its executor, run for real
on a tiny Keras SavedModel whose serving_default takes serialized tf.Examples."""
import gzip
import io
import os

import numpy as np
import pytest

from core.contract import IMAGE_KEY
from components.image_example_gen.encoding.shard_writer import frame
from monitor.readers.registry import detect_format, read_window
from monitor.records import BadRecord, Record
from tests.support.examples import image_example

pytestmark = pytest.mark.integration  # real Keras, Beam and TFX work


def _tiny_model(path: str):
    """2 classes over 8x8 RGB PNGs; serving_default: serialized tf.Example -> probabilities."""
    import tensorflow as tf
    inputs = tf.keras.Input((8, 8, 3))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, activation="softmax")(
        tf.keras.layers.Flatten()(inputs)))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve(examples):
        encoded = tf.io.parse_example(
            examples, {IMAGE_KEY: tf.io.FixedLenFeature([], tf.string)})[IMAGE_KEY]
        images = tf.map_fn(lambda png: tf.cast(tf.io.decode_png(png, 3), tf.float32) / 255.0,
                           encoded, fn_output_signature=tf.TensorSpec([8, 8, 3], tf.float32))
        return {"probabilities": model(images)}
    tf.saved_model.save(model, path, signatures={"serving_default": serve})
    return model


@pytest.fixture(scope="module")
def bulk_inferred(tmp_path_factory):
    """(BulkInferrer's inference_result folder, {file name: PNG bytes}, the Keras model)."""
    import tensorflow as tf
    from tfx.components.bulk_inferrer.executor import Executor
    from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
    from tfx.proto import bulk_inferrer_pb2
    from tfx.types import artifact_utils, standard_artifacts
    from tfx.types import standard_component_specs as specs
    from tfx.utils import proto_utils

    from core.beam_deps import LOCAL_SETUP_FILE, with_setup_file
    from settings.config import LOCAL_BEAM_ARGS
    from tests.support.images import write_image
    root = tmp_path_factory.mktemp("bulk")
    pngs = {f"{i}.png": write_image(root / "png" / f"{i}.png", seed=i).read_bytes()
            for i in range(5)}
    examples = standard_artifacts.Examples()
    examples.uri = str(root / "examples")
    examples.split_names = artifact_utils.encode_split_names(["unlabelled"])
    os.makedirs(f"{examples.uri}/Split-unlabelled")
    with tf.io.TFRecordWriter(f"{examples.uri}/Split-unlabelled/data.tfrecord.gz",
                              "GZIP") as writer:
        for name, png in pngs.items():
            writer.write(image_example(png, name))
    model = standard_artifacts.Model()
    model.uri = str(root / "model")
    keras_model = _tiny_model(os.path.join(model.uri, "Format-Serving"))
    result = standard_artifacts.InferenceResult()
    result.uri = str(root / "inference_result")
    os.makedirs(result.uri)
    context = BaseBeamExecutor.Context(
        beam_pipeline_args=with_setup_file(LOCAL_BEAM_ARGS.split(), LOCAL_SETUP_FILE),
        tmp_dir=str(root / "tmp"))
    Executor(context).Do(
        {specs.EXAMPLES_KEY: [examples], specs.MODEL_KEY: [model]},
        {specs.INFERENCE_RESULT_KEY: [result]},
        {specs.DATA_SPEC_KEY: proto_utils.proto_to_json(bulk_inferrer_pb2.DataSpec()),
         specs.MODEL_SPEC_KEY: proto_utils.proto_to_json(bulk_inferrer_pb2.ModelSpec())})
    return result.uri, pngs, keras_model


def test_every_bulk_inferrer_log_is_a_record_with_its_image_and_probabilities(bulk_inferred):
    folder, pngs, model = bulk_inferred
    assert [n for n in os.listdir(folder) if n.startswith("prediction_logs")]  # gzipped
    assert detect_format(folder) == "prediction_log"
    items = {i.id: i for i in read_window(folder)}
    assert set(items) == set(pngs) and all(isinstance(i, Record) for i in items.values())
    for name, item in items.items():
        assert item.image == pngs[name]
        import tensorflow as tf
        pixels = tf.cast(tf.io.decode_png(pngs[name], 3), tf.float32)[None] / 255.0
        np.testing.assert_allclose(item.probabilities, model(pixels).numpy()[0], atol=1e-6)


def test_a_corrupt_or_cut_tfrecord_is_a_bad_record_and_reading_goes_on(bulk_inferred, tmp_path):
    folder, pngs, _ = bulk_inferred
    [log_file] = [os.path.join(folder, n) for n in os.listdir(folder)
                  if n.startswith("prediction_logs")]
    with gzip.open(log_file) as f:
        data = f.read()
    one_record = data[:12 + int.from_bytes(data[:8], "little") + 4]
    (tmp_path / "a.tfrecord").write_bytes(one_record + frame(b"\xff\xff\xff not a log"))
    (tmp_path / "b.tfrecord").write_bytes(one_record + one_record[:30])  # cut short
    (tmp_path / "c.tfrecord").write_bytes(one_record)
    items = list(read_window(str(tmp_path)))
    assert [type(i).__name__ for i in items] == ["Record", "BadRecord", "Record", "BadRecord",
                                                 "Record"]
    assert (items[1].id, items[1].reason) == (f"{tmp_path / 'a.tfrecord'}#1",
                                              "not a PredictionLog")
    assert items[3].id == f"{tmp_path / 'b.tfrecord'}#1"
    assert items[3].reason.startswith("unreadable TFRecord")
    assert isinstance(items[4], Record) and io.BytesIO(items[4].image).read(4) == b"\x89PNG"
    assert not any(isinstance(i, BadRecord) for i in (items[0], items[2]))
