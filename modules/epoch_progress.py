"""One line per training epoch, aligned with the pipeline's component lines; fit throughput."""
import json
import os
import time

import tf_keras as keras

from core.storage import files

_SHOWN = ("loss", "accuracy", "val_loss", "val_accuracy")


class EpochLines(keras.callbacks.Callback):
    """`epoch 3/10  loss 0.4156  accuracy 0.8664  val_loss ...  2.9s`, flushed at once.

    Replaces Keras' verbose=2 output, whose two lines per epoch repeat the step
    count and per-step timings.
    """

    def __init__(self, epochs: int, indent: int = 10, label: str = ""):
        super().__init__()
        self._epochs, self._indent, self._start = epochs, " " * indent, 0.0
        self._label = f" {label}" if label else ""  # the phase: head, fine-tune

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        values = "  ".join(f"{k} {logs[k]:.4f}" for k in _SHOWN if k in (logs or {}))
        print(f"{self._indent}epoch {epoch + 1}/{self._epochs}{self._label}  {values}  "
              f"{time.time() - self._start:.1f}s", flush=True)


FIT_STATS_FILE = "fit_stats.json"


class FitThroughput(keras.callbacks.Callback):
    """Training examples per second, from epoch start to validation start, to a JSON file.

    Validation is excluded (Keras runs it inside the epoch, after
    `on_test_begin`), and so is the first epoch, which pays for tracing and
    for filling the input pipeline: what is left is the steady state, the
    figure bench/training/trainer_input compares with the same model fed from NumPy.
    """

    def __init__(self, path: str, examples_per_step: int, steps_per_epoch: int,
                 phase: str = "train"):
        super().__init__()
        self._path, self._examples = path, examples_per_step * steps_per_epoch
        self._start, self._seconds, self._open = 0.0, [], False
        self._phase, self._val_accuracy = phase, []
        self._train_begin = None
        # perf_counter() at on_train_begin and on_train_end, for the caller to
        # split the whole fit call's time (see modules/trainer.run_fn).
        self.train_begin_at = self.train_end_at = None

    def on_train_begin(self, logs=None):
        self._train_begin = self.train_begin_at = time.perf_counter()

    def on_epoch_begin(self, epoch, logs=None):
        self._start, self._open = time.perf_counter(), True

    def on_test_begin(self, logs=None):
        self._close()

    def on_epoch_end(self, epoch, logs=None):
        self._close()  # no validation this epoch
        if logs and "val_accuracy" in logs:
            self._val_accuracy.append(float(logs["val_accuracy"]))

    def _close(self):
        if self._open:
            self._seconds.append(time.perf_counter() - self._start)
            self._open = False

    def on_train_end(self, logs=None):
        self.train_end_at = time.perf_counter()
        steady = self._seconds[1:] or self._seconds
        stats = {"examples_per_epoch": self._examples, "epoch_seconds": self._seconds,
                 "train_s": (None if self._train_begin is None
                             else self.train_end_at - self._train_begin),
                 "first_epoch_s": self._seconds[0] if self._seconds else None,
                 "examples_per_s": (self._examples * len(steady) / sum(steady)
                                    if steady else None)}
        # Two-phase training (head, fine-tune) keeps each phase's figures; the
        # top level is the last phase's.
        previous = (read_fit_stats(os.path.dirname(self._path)) or {}).get("phases", [])
        phase = {"phase": self._phase, **stats, "val_accuracy": self._val_accuracy}
        stats["phases"] = [p for p in previous if p["phase"] != self._phase] + [phase]
        files.write_text(self._path, json.dumps(stats, indent=2))  # gs:// on Kubeflow/Vertex


def read_fit_stats(model_run_dir: str):
    """What FitThroughput wrote into the ModelRun folder, or None (an older run)."""
    path = os.path.join(model_run_dir, FIT_STATS_FILE)
    if not files.exists(path):
        return None
    return json.loads(files.read_text(path))


def add_fit_stats(model_run_dir: str, **values) -> None:
    """Adds `values` to the stats FitThroughput wrote (e.g. the whole fit call's seconds)."""
    stats = read_fit_stats(model_run_dir) or {}
    files.write_text(os.path.join(model_run_dir, FIT_STATS_FILE),
                     json.dumps({**stats, **values}, indent=2))
