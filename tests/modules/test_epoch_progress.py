"""FitThroughput: steady-state training examples/s, validation and the first epoch left out."""
import json

import numpy as np
import pytest
import tf_keras as keras

from modules.epoch_progress import FitThroughput, read_fit_stats


def test_times_each_epoch_up_to_validation_and_skips_the_first(tmp_path, monkeypatch):
    clock = iter([-1.0, 0.0, 3.0, 10.0, 11.0, 20.0, 21.0, 22.0])  # train, epochs, end
    monkeypatch.setattr("modules.epoch_progress.time.perf_counter", lambda: next(clock))
    callback = FitThroughput(str(tmp_path / "fit_stats.json"), 8, 4)  # 32 examples/epoch
    callback.on_train_begin()
    for epoch in range(3):
        callback.on_epoch_begin(epoch)
        callback.on_test_begin()  # validation: not counted
        callback.on_epoch_end(epoch)
    callback.on_train_end()
    stats = read_fit_stats(str(tmp_path))
    assert stats["epoch_seconds"] == [3.0, 1.0, 1.0]
    assert stats["first_epoch_s"] == 3.0
    assert stats["train_s"] == 23.0
    assert stats["examples_per_s"] == pytest.approx(32.0)


def test_a_real_fit_writes_a_plausible_rate(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy")
    path = tmp_path / "fit_stats.json"
    model.fit(np.zeros((64, 4)), np.zeros(64), batch_size=8, epochs=3, verbose=0,
              validation_data=(np.zeros((8, 4)), np.zeros(8)),
              callbacks=[FitThroughput(str(path), 8, 8)])
    stats = json.loads(path.read_text())
    assert len(stats["epoch_seconds"]) == 3
    assert stats["examples_per_epoch"] == 64
    assert stats["examples_per_s"] == pytest.approx(128 / sum(stats["epoch_seconds"][1:]))


def test_no_stats_from_an_older_run(tmp_path):
    assert read_fit_stats(str(tmp_path)) is None


def test_fit_call_figures_are_added_to_the_stats(tmp_path):
    from modules.epoch_progress import add_fit_stats
    (tmp_path / "fit_stats.json").write_text(json.dumps({"examples_per_s": 10.0}))
    add_fit_stats(str(tmp_path), fit_call_s=3.0, setup_s=0.5)
    assert read_fit_stats(str(tmp_path)) == {"examples_per_s": 10.0, "fit_call_s": 3.0,
                                             "setup_s": 0.5}
