"""Trainer settings for the search's tests: a small cnn, augmenting, in float32."""
from modules.params import TrainerParams

PARAMS = TrainerParams(
    model="cnn", batch_size=32, epochs=4, train_steps=None, eval_steps=None,
    optimizer="adam", learning_rate=1e-3, warmup_epochs=1.0, early_stopping_patience=0,
    label_smoothing=0.0, augment_crop=2, augment_scale=0.25, augment_flip=False,
    augment_color=0.2, cache_bytes=0, steps_per_execution=1, tensorboard_update_freq=100,
    tpu=None, full_precision=True, seed=0, examples_budget=1000, min_epochs=1, max_epochs=4,
    disk_headroom=0, workers=1, rendezvous_s=10.0)
