"""The Trainer's helpers: epoch plan, labels, and resuming a killed training."""
import os

import numpy as np
import pytest
import tf_keras as keras
from tfx import v1 as tfx

from modules.model import build_cnn, compile_model
from modules.trainer import backup_dir, epoch_plan, read_labels


@pytest.mark.parametrize("steps, plan", [(400, (10, 40)), (30, (10, 3)), (25, (5, 5)),
                                         (23, (1, 23)), (1, (1, 1))])
def test_epoch_plan_trains_exactly_the_requested_steps(steps, plan):
    assert epoch_plan(steps) == plan


def test_epoch_plan_rejects_zero_steps():
    with pytest.raises(ValueError, match="train_steps"):
        epoch_plan(0)


def test_labels_are_read_from_beside_the_splits(tmp_path):
    (tmp_path / "Split-train").mkdir()
    (tmp_path / "labels.txt").write_text("cat\ndog\némeu\n")
    assert read_labels(str(tmp_path / "Split-train" / "*")) == ["cat", "dog", "émeu"]


def _fn_args(tmp_path, execution, **config):
    return tfx.components.FnArgs(
        train_files=["ex/Split-train/*"], eval_files=["ex/Split-eval/*"],
        transform_output="tft", train_steps=400, custom_config={"seed": 0, **config},
        model_run_dir=str(tmp_path / "Trainer" / "model_run" / str(execution)))


def test_backup_dir_survives_a_new_execution_but_not_new_settings(tmp_path):
    first, rerun = _fn_args(tmp_path, 7), _fn_args(tmp_path, 8)
    assert backup_dir(first) == backup_dir(rerun)
    assert backup_dir(first).startswith(str(tmp_path / "Trainer" / ".backup"))
    assert backup_dir(first) != backup_dir(_fn_args(tmp_path, 8, seed=1))


class _Interrupt(keras.callbacks.Callback):
    """Raises after `epoch`, as a kill would, keeping the weights it had then."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch, self.weights = epoch, None

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            self.weights = self.model.get_weights()
            raise KeyboardInterrupt("killed")


class _Epochs(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen, self.first_weights = [], None

    def on_epoch_begin(self, epoch, logs=None):
        if not self.seen:
            self.first_weights = self.model.get_weights()
        self.seen.append(epoch)


def test_an_interrupted_fit_resumes_where_it_stopped(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 8, 8, 1)).astype("float32"), rng.integers(0, 2, 32)
    backup = str(tmp_path / "backup")

    def fit(callback):
        model = compile_model(build_cnn((8, 8, 1), 2), "adam", 1e-3, 1)
        model.fit(x, y, epochs=4, batch_size=8, verbose=0,
                  callbacks=[keras.callbacks.BackupAndRestore(backup), callback])

    interrupt = _Interrupt(epoch=1)
    with pytest.raises(KeyboardInterrupt):
        fit(interrupt)
    resumed = _Epochs()
    fit(resumed)
    assert resumed.seen == [2, 3]  # epochs 0 and 1 were done before the kill
    for got, want in zip(resumed.first_weights, interrupt.weights):
        np.testing.assert_array_equal(got, want)
    # Keras removes the checkpoints once training completes (the folder may stay).
    assert not [f for _, _, files in os.walk(backup) for f in files]


def _epochs(dataset, batches):
    """Image checksums of `batches` batches, in order."""
    return [round(float(v), 4) for images, _ in dataset.take(batches)
            for v in images.numpy().reshape(images.shape[0], -1).sum(axis=1)]


def test_a_small_split_is_cached_and_reshuffled_every_epoch(transformed):
    from components.image_example_gen.ingest import read_report
    from modules.trainer import make_dataset
    count = read_report(transformed.examples_dir)["splits"]["train"]
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 1)
    streamed = _epochs(make_dataset(*args, shuffle=False, seed=0), count)
    cached = _epochs(make_dataset(*args, shuffle=True, seed=0, examples=count), 3 * count)
    epochs = [cached[i * count:(i + 1) * count] for i in range(3)]
    # Each epoch is the whole split once, the same tensors the streaming path makes...
    assert all(sorted(epoch) == sorted(streamed) for epoch in epochs)
    # ...in a new order each time.
    assert len({tuple(epoch) for epoch in epochs}) == 3


def _ops(dataset):
    import tensorflow as tf
    graph = tf.compat.v1.GraphDef.FromString(
        tf.raw_ops.DatasetToGraphV2(input_dataset=dataset._variant_tensor).numpy())
    return {node.op for node in graph.node}


def test_a_split_over_the_budget_streams(transformed, monkeypatch):
    from modules import trainer
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 2)
    assert "CacheDatasetV2" in _ops(trainer.make_dataset(*args, shuffle=True, seed=0,
                                                         examples=7))
    monkeypatch.setattr(trainer, "CACHE_BUDGET_BYTES", 1)
    dataset = trainer.make_dataset(*args, shuffle=True, seed=0, examples=7)
    assert "CacheDatasetV2" not in _ops(dataset)
    images, labels = next(iter(dataset))
    assert images.shape[0] == 2 and labels.shape == (2,)


def test_split_size_reads_the_ingest_report_and_is_zero_without_one(tmp_path):
    from modules.trainer import split_size
    (tmp_path / "ingest_report.json").write_text('{"splits": {"train": 797, "eval": 203}}')
    assert split_size(str(tmp_path / "Split-train" / "*")) == 797
    assert split_size(str(tmp_path / "Split-eval" / "*")) == 203
    assert split_size(str(tmp_path / "other" / "Split-train" / "*")) == 0
