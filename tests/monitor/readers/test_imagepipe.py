"""The `imagepipe` reader on what `imagepipe predict --data --output x.jsonl` writes: a real
batch prediction run over the exported model (the batch tests' fixture)."""
import numpy as np
import pytest

from monitor.readers.registry import detect_format, read_window
from monitor.records import BadRecord, Record
from tests.support.images import copy_images

pytestmark = pytest.mark.integration  # real Beam and TensorFlow work


def test_each_row_is_a_record_with_the_logged_answer_and_errors_are_bad_records(
        tmp_path, exported_model):
    from settings.config import PipelineConfig
    from prediction import batch, batch_io
    from prediction.predict import Predictor
    folder = copy_images(exported_model.images[:4], tmp_path / "images")
    (folder / "corrupt.png").write_bytes(exported_model.images[0].read_bytes()[:60])
    output = tmp_path / "predictions.jsonl"
    job = batch_io.plan_job(exported_model.model_dir, str(folder), str(output), 2,
                            PipelineConfig.from_values().tfrecord.image_key)
    batch.run_batch_predict(job, PipelineConfig.from_values().beam_pipeline_args)
    assert detect_format(str(output)) == "imagepipe"
    labels = exported_model.labels
    items = {i.id: i for i in read_window(str(output), labels=labels)}
    assert isinstance(items[str(folder / "corrupt.png")], BadRecord)
    predictor = Predictor(exported_model.model_dir)
    for path in exported_model.images[:4]:
        item = items[str(folder / path.name)]
        expected = predictor.probabilities(path.read_bytes())
        assert isinstance(item, Record) and item.image == path.read_bytes()
        assert item.predicted == int(np.argmax(expected))
        assert item.confidence == pytest.approx(float(np.max(expected)), abs=1e-5)
        np.testing.assert_allclose(item.probabilities, expected, atol=1e-5)  # top 2 of 2
    unknown = list(read_window(str(output), labels=["x", "y"]))
    assert all(isinstance(i, BadRecord) for i in unknown)
