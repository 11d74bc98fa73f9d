"""One line per training epoch, aligned with the pipeline's component lines."""
import time

import tf_keras as keras

_SHOWN = ("loss", "accuracy", "val_loss", "val_accuracy")


class EpochLines(keras.callbacks.Callback):
    """`epoch 3/10  loss 0.4156  accuracy 0.8664  val_loss ...  2.9s`, flushed at once.

    Replaces Keras' verbose=2 output, whose two lines per epoch repeat the step
    count and per-step timings.
    """

    def __init__(self, epochs: int, indent: int = 10):
        super().__init__()
        self._epochs, self._indent, self._start = epochs, " " * indent, 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        values = "  ".join(f"{k} {logs[k]:.4f}" for k in _SHOWN if k in (logs or {}))
        print(f"{self._indent}epoch {epoch + 1}/{self._epochs}  {values}  "
              f"{time.time() - self._start:.1f}s", flush=True)
