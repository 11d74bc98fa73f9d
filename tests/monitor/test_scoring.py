"""score_window: logged answers kept, images scored by the real model, bad records named."""
import numpy as np

from monitor.records import BadRecord, Record
from monitor.scoring import Scored, score_window


def _scored(reference, items, batch_size=3):
    model_dir = reference[0]
    return list(score_window(items, model_dir, 2, 10**8, batch_size=batch_size))


def test_images_are_scored_in_batches_as_the_model_scores_them_one_by_one(reference):
    import tensorflow as tf
    model_dir, paths, _ = reference
    images = [p.read_bytes() for p in paths[:7]]
    found = _scored(reference, [Record(str(i), image=b) for i, b in enumerate(images)])
    serve = tf.saved_model.load(model_dir).signatures["serving_image"]
    expected = serve(image_bytes=tf.constant(images))["probabilities"].numpy()
    assert [s.id for s in found] == [str(i) for i in range(7)]
    assert [s.predicted for s in found] == list(np.argmax(expected, axis=1))
    np.testing.assert_allclose([s.confidence for s in found], expected.max(axis=1), rtol=1e-5)
    assert all(s.features.height == s.features.width == 8 for s in found)


def test_a_logged_answer_is_kept_and_its_image_only_measured(reference):
    image = reference[1][0].read_bytes()
    found = _scored(reference, [
        Record("logged", image=image, probabilities=np.array([0.2, 0.8])),
        Record("named", predicted=0, confidence=0.7)])
    assert found[0] == Scored("logged", 1, 0.8, found[0].features)
    assert found[0].features.brightness < 80
    assert found[1] == Scored("named", 0, 0.7, None)


def test_bad_records_say_why_and_never_stop_the_window(reference):
    image = reference[1][0].read_bytes()
    found = _scored(reference, [
        BadRecord("log:3", "not JSON"), Record("cut", image=image[:20]),
        Record("three", probabilities=np.array([0.2, 0.3, 0.5])),
        Record("id 5", predicted=5, confidence=0.9), Record("empty"),
        Record("good", image=image)])
    assert [type(f).__name__ for f in found] == ["BadRecord"] * 5 + ["Scored"]
    reasons = [f.reason for f in found[:5]]
    assert reasons[0] == "not JSON" and "3 probabilities" in reasons[2]
    assert "5" in reasons[3] and "nothing to measure" in reasons[4]
