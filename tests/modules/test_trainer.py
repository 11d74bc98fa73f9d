"""The Trainer's helpers: datasets and their decode cache, resuming a killed training."""
import os

import numpy as np
import pytest
import tf_keras as keras
from tfx import v1 as tfx

from modules.training.decode_cache import MEMORY
from modules.networks.keras_model import compile_model
from modules.networks.small import build_cnn
from modules.training.callbacks import SparseBackup, backup_dir

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


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


def _fit_four_epochs(backup: keras.callbacks.Callback, callback: keras.callbacks.Callback):
    """A tiny cnn's 4 epochs on random data, fresh from `backup`'s state if it has one."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 8, 8, 1)).astype("float32")
    y = keras.utils.to_categorical(rng.integers(0, 2, 32), 2)
    model = compile_model(build_cnn((8, 8, 1), 2), "adam", 1e-3, 1)
    model.fit(x, y, epochs=4, batch_size=8, verbose=0, callbacks=[backup, callback])


def test_an_interrupted_fit_resumes_where_it_stopped(tmp_path):
    backup = str(tmp_path / "backup")
    interrupt = _Interrupt(epoch=1)
    with pytest.raises(KeyboardInterrupt):
        _fit_four_epochs(keras.callbacks.BackupAndRestore(backup), interrupt)
    resumed = _Epochs()
    _fit_four_epochs(keras.callbacks.BackupAndRestore(backup), resumed)
    assert resumed.seen == [2, 3]  # epochs 0 and 1 were done before the kill
    for got, want in zip(resumed.first_weights, interrupt.weights):
        np.testing.assert_array_equal(got, want)
    # Keras removes the checkpoints once training completes (the folder may stay).
    assert not [f for _, _, files in os.walk(backup) for f in files]


@pytest.mark.parametrize("every_s, resumes_at", [(0.0, [2, 3]), (3600.0, [1, 2, 3])])
def test_a_sparse_backup_resumes_from_the_last_epoch_it_backed_up(tmp_path, every_s,
                                                                  resumes_at):
    backup = str(tmp_path / "backup")
    with pytest.raises(KeyboardInterrupt):
        _fit_four_epochs(SparseBackup(backup, every_s), _Interrupt(epoch=1))
    resumed = _Epochs()
    _fit_four_epochs(SparseBackup(backup, every_s), resumed)
    # The first epoch is always backed up; the second only once every_s has passed.
    assert resumed.seen == resumes_at


def _epochs(dataset, batches):
    """Image checksums of `batches` batches, in order."""
    return [round(float(v), 4) for images, _ in dataset.take(batches)
            for v in images.numpy().reshape(images.shape[0], -1).sum(axis=1)]


def test_a_cached_split_is_decoded_once_and_reshuffled_every_epoch(transformed):
    from core.contract import read_ingest_report
    from modules.training.input_pipeline import make_dataset
    count = read_ingest_report(transformed.examples_dir)["splits"]["train"]
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 1)
    streamed = _epochs(make_dataset(*args, shuffle=False, seed=0, num_classes=3), count)
    cached = _epochs(make_dataset(*args, shuffle=True, seed=0, num_classes=3, examples=count,
                                  cache=MEMORY), 3 * count)
    epochs = [cached[i * count:(i + 1) * count] for i in range(3)]
    # Each epoch is the whole split once, the same tensors the streaming path makes...
    assert all(sorted(epoch) == sorted(streamed) for epoch in epochs)
    # ...in a new order each time.
    assert len({tuple(epoch) for epoch in epochs}) == 3


def test_a_seeded_training_stream_repeats_exactly(transformed):
    """Same seed, same batches: shuffled, cached, augmented in parallel, over several epochs."""
    from modules.augment import Augmentation
    from modules.training.input_pipeline import make_dataset
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 2)

    def stream(seed):
        keras.utils.set_random_seed(seed)  # as run_fn does: shuffles use the global seed too
        dataset = make_dataset(*args, shuffle=True, seed=seed, num_classes=3,
                               augmentation=Augmentation(crop=2, flip=True, color=0.2),
                               examples=7, cache=MEMORY)
        return [(images.numpy(), labels.numpy()) for images, labels in dataset.take(20)]

    first, again, other = stream(0), stream(0), stream(1)
    for (images, labels), (images_again, labels_again) in zip(first, again):
        np.testing.assert_array_equal(images, images_again)
        np.testing.assert_array_equal(labels, labels_again)
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(first, other))


def _ops(dataset):
    import tensorflow as tf
    graph = tf.compat.v1.GraphDef.FromString(
        tf.raw_ops.DatasetToGraphV2(input_dataset=dataset._variant_tensor).numpy())
    return {node.op for node in graph.node}


def test_a_split_over_the_memory_budget_is_cached_in_a_file_then_removed(transformed, tmp_path):
    from modules.training import input_pipeline as trainer
    from modules.training.decode_cache import plan_caches, remove_caches
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 2)
    with remove_caches(str(tmp_path / "cache")) as cache_dir:
        caches = plan_caches({"train": 7}, [8, 8, 3], budget=1, cache_dir=cache_dir,
                             disk_headroom=0)
        assert caches["train"] == str(tmp_path / "cache" / "train")
        dataset = trainer.make_dataset(*args, shuffle=True, seed=0, num_classes=3, examples=7,
                                       cache=caches["train"])
        assert "CacheDatasetV2" in _ops(dataset)
        batches = list(dataset.take(8))  # past one pass: the cache file is complete
        assert batches[0][0].shape[0] == 2 and batches[0][1].shape == (2, 3)  # one-hot labels
        assert [f for f in os.listdir(cache_dir) if f.startswith("train")]
    assert not (tmp_path / "cache").exists()


def test_a_split_of_unknown_size_streams(transformed):
    from modules.training import input_pipeline as trainer
    args = (transformed.files["train"], transformed.data_accessor, transformed.tft_output, 2)
    dataset = trainer.make_dataset(*args, shuffle=True, seed=0, num_classes=3, cache=None)
    assert "CacheDatasetV2" not in _ops(dataset)



class _Snapshots(keras.callbacks.Callback):
    """The model's weights at the end of every epoch."""

    def __init__(self):
        super().__init__()
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([w.copy() for w in self.model.get_weights()])


def test_early_stopping_stops_and_restores_the_best_epochs_weights(tmp_path):
    import types

    from modules.params import TrainerParams
    from modules.schedule import Phase, Schedule
    from modules.training.callbacks import fit_callbacks as _callbacks
    params = TrainerParams(
        model="cnn", batch_size=16, epochs=30, train_steps=None, eval_steps=None,
        optimizer="adam", learning_rate=1e-2, warmup_epochs=0.0, early_stopping_patience=2,
        label_smoothing=0.0, augment_crop=0, augment_scale=0.0, augment_flip=False,
        augment_color=0.0, cache_bytes=0, steps_per_execution=1, tensorboard_update_freq=100,
        tpu=None, full_precision=True, seed=0,
        examples_budget=900_000, min_epochs=3, max_epochs=40,
        disk_headroom=2 << 30, workers=1, rendezvous_s=300.0)
    run_dir = tmp_path / "trainer" / "model_run" / "1"
    fn_args = types.SimpleNamespace(model_run_dir=str(run_dir), train_files=["t"],
                                    eval_files=["e"], transform_output="x", train_steps=0,
                                    custom_config=params.to_custom_config())
    # A Distribution's fields that the callbacks read.
    one_process = types.SimpleNamespace(is_chief=True, global_batch=16, name="default",
                                        coordinated=False, workers=1)
    callbacks = _callbacks(fn_args, params, Schedule(30, 2, 1), one_process,
                           Phase("train", 0, 30, 1e-3), str(run_dir))
    # Random labels: the model memorizes the training set and validation gets worse.
    rng = np.random.default_rng(0)
    x, xv = (rng.normal(size=(32, 8, 8, 1)).astype("float32") for _ in range(2))
    y, yv = (keras.utils.to_categorical(rng.integers(0, 2, 32), 2) for _ in range(2))
    keras.utils.set_random_seed(0)
    model = compile_model(build_cnn((8, 8, 1), 2), "adam", 1e-2, 1)
    snapshots = _Snapshots()
    history = model.fit(x, y, batch_size=16, epochs=30, validation_data=(xv, yv), verbose=0,
                        callbacks=[snapshots, *callbacks])
    losses = history.history["val_loss"]
    best = int(np.argmin(losses))
    assert len(losses) < 30 and best < len(losses) - 1  # stopped early, after its best epoch
    for kept, at_best in zip(model.get_weights(), snapshots.weights[best]):
        np.testing.assert_array_equal(kept, at_best)


def test_a_split_too_large_for_the_free_disk_streams_instead_of_filling_it(tmp_path):
    from modules.training.decode_cache import MEMORY, free_disk_bytes, plan_caches
    from pipeline.planning.rules import DISK_HEADROOM
    free = free_disk_bytes(str(tmp_path / "cache"))  # not created yet: its parent's disk
    image = 64 * 64 * 3 * 4
    fits = (free - DISK_HEADROOM) // image // 2
    caches = plan_caches({"train": fits, "eval": 10, "huge": 2 * fits + 10}, [64, 64, 3],
                         budget=10 * image, cache_dir=str(tmp_path / "cache"),
                         disk_headroom=DISK_HEADROOM)
    assert caches == {"train": str(tmp_path / "cache" / "train"), "eval": MEMORY,
                      "huge": None}
    assert plan_caches({"train": 10 ** 9}, [64, 64, 3], 0, "gs://b/cache", DISK_HEADROOM) == {
        "train": "gs://b/cache/train"}  # remote: no local disk to check



def test_the_cache_folder_and_its_empty_parent_are_removed_afterwards(tmp_path):
    from modules.training.decode_cache import remove_caches
    with remove_caches(str(tmp_path / ".decode_cache" / "7")):
        (tmp_path / ".decode_cache" / "7" / "train.index").write_text("x")
        with remove_caches(str(tmp_path / ".decode_cache" / "8")):
            pass
        assert os.listdir(tmp_path / ".decode_cache") == ["7"]  # another execution's stays
    assert not (tmp_path / ".decode_cache").exists()


def test_each_worker_reads_its_own_files_when_every_worker_can_have_one(tmp_path):
    import types

    from modules.training.input_pipeline import worker_files as _worker_files
    for name in ("data-00000-of-00003.gz", "data-00001-of-00003.gz", "data-00002-of-00003.gz"):
        (tmp_path / name).write_bytes(b"")
    pattern = [str(tmp_path / "*")]
    worker = lambda index, workers: types.SimpleNamespace(  # noqa: E731
        workers=workers, task_index=index, coordinated=False)
    first, by_file = _worker_files(pattern, worker(0, 2))
    second, _ = _worker_files(pattern, worker(1, 2))
    assert by_file and [p[-22:] for p in first] == ["data-00000-of-00003.gz",
                                                    "data-00002-of-00003.gz"]
    assert [p[-22:] for p in second] == ["data-00001-of-00003.gz"]
    assert _worker_files(pattern, worker(0, 4)) == (pattern, False)  # fewer files: DATA
    assert _worker_files(pattern, worker(0, 1)) == (pattern, False)
