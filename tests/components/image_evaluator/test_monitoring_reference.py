"""The monitoring reference: built from the audit's predictions, written beside a byte-for-byte
copy of the train statistics, or without them, saying so."""
import json

import numpy as np
import pytest

from core.contract import (MONITOR_REFERENCE_FILE, MONITORING_DIR,
                           TRAIN_STATISTICS_FILE, split_dir)
from components.image_evaluator.monitoring_reference import (STATISTICS_FILE, build_reference,
                                                             train_statistics_file,
                                                             write_reference)

NAMES = ["cat", "dog", "emu"]
LABELS = np.array([0, 2, 1, 2])
PROBABILITIES = np.array([[0.9, 0.05, 0.05], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1],
                          [0.123456, 0.0, 0.876544]], np.float32)


def test_the_reference_holds_each_eval_images_prediction_confidence_and_label():
    reference = build_reference(NAMES, LABELS, PROBABILITIES, 0.72)
    assert reference == {"format": 1, "labels": NAMES,
                         "eval": {"count": 4, "accuracy": 0.72, "predicted": [0, 2, 0, 2],
                                  "confidence": [0.9, 0.5, 0.6, 0.8765],
                                  "label": [0, 2, 1, 2]}}
    json.dumps(reference)  # plain Python numbers only


def test_without_tfmas_accuracy_the_predictions_own_is_used():
    assert build_reference(NAMES, LABELS, PROBABILITIES, None)["eval"]["accuracy"] == 0.75


def _statistics(tmp_path) -> str:
    """A StatisticsGen output folder holding a real DatasetFeatureStatisticsList."""
    from tensorflow_metadata.proto.v0 import statistics_pb2
    stats = statistics_pb2.DatasetFeatureStatisticsList()
    dataset = stats.datasets.add(name="train", num_examples=4)
    dataset.features.add().path.step.append("image/brightness")
    train = tmp_path / "statistics" / "Split-train"
    train.mkdir(parents=True)
    (train / STATISTICS_FILE).write_bytes(stats.SerializeToString())
    return str(tmp_path / "statistics")


def test_the_train_statistics_are_copied_byte_for_byte_and_named(tmp_path):
    statistics = _statistics(tmp_path)
    folder = write_reference(str(tmp_path / "blessing"), NAMES, LABELS, PROBABILITIES, 0.72,
                             statistics)
    assert folder == str(tmp_path / "blessing" / MONITORING_DIR)
    source = tmp_path / "statistics" / "Split-train" / STATISTICS_FILE
    assert (tmp_path / "blessing" / MONITORING_DIR / TRAIN_STATISTICS_FILE).read_bytes() == \
        source.read_bytes()
    written = json.loads((tmp_path / "blessing" / MONITORING_DIR /
                          MONITOR_REFERENCE_FILE).read_text())
    assert written == {**build_reference(NAMES, LABELS, PROBABILITIES, 0.72),
                       "train_statistics": TRAIN_STATISTICS_FILE}


@pytest.mark.parametrize("statistics", [None, "no train split"])
def test_without_train_statistics_the_reference_says_so(tmp_path, statistics):
    uri = None
    if statistics:  # StatisticsGen's folder, with only an eval split
        uri = str(tmp_path / "statistics")
        (tmp_path / "statistics" / "Split-eval").mkdir(parents=True)
    folder = tmp_path / "blessing" / MONITORING_DIR
    write_reference(str(tmp_path / "blessing"), NAMES, LABELS, PROBABILITIES, 0.72, uri)
    assert sorted(p.name for p in folder.iterdir()) == [MONITOR_REFERENCE_FILE]
    assert json.loads((folder / MONITOR_REFERENCE_FILE).read_text())["train_statistics"] is None


def test_statistics_are_found_where_statistics_gen_writes_them(tmp_path):
    from tfx.components.statistics_gen.executor import DEFAULT_FILE_NAME
    assert STATISTICS_FILE == DEFAULT_FILE_NAME
    statistics = _statistics(tmp_path)
    assert train_statistics_file(statistics) == f"{split_dir(statistics, 'train')}/" \
                                                f"{DEFAULT_FILE_NAME}"
    assert train_statistics_file(None) is None


def test_object_stores_get_the_same_files(tmp_path):
    """Through the storage layer (tf.io.gfile's in-memory file system stands in for gs://)."""
    from core.storage import files
    local = _statistics(tmp_path)
    remote = "ram://monitoring-reference-test"
    source = f"{split_dir(local, 'train')}/{STATISTICS_FILE}"
    files.write_bytes(f"{split_dir(remote + '/statistics', 'train')}/{STATISTICS_FILE}",
                      files.read_bytes(source))
    folder = write_reference(f"{remote}/blessing", NAMES, LABELS, PROBABILITIES, 0.72,
                             f"{remote}/statistics")
    assert files.read_bytes(f"{folder}/{TRAIN_STATISTICS_FILE}") == files.read_bytes(source)
    assert json.loads(files.read_text(f"{folder}/{MONITOR_REFERENCE_FILE}"))[
        "train_statistics"] == TRAIN_STATISTICS_FILE
