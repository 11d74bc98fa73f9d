"""Training recipes on real photos at a fixed time budget: accuracy per minute, side by side.

    bash scripts/bench.sh recipes --data ~/datasets/flowers_photos --budget-s 150
    bash scripts/bench.sh recipes --data DIR --only float32 ema mixup

The photo model at the planned side (128 px on a CPU), trained from scratch on
the folder (decoded once, split and normalized as bench/photo_models does)
with the Trainer's pieces: the photo plan's augmentation, warmup then cosine,
Adam at 2e-3, label smoothing 0.1. Each recipe changes one thing:
  float32          the baseline: what the plan runs on a CPU today;
  mixed_bfloat16   Keras's mixed precision, bfloat16 compute (AVX512_BF16);
  ema              the evaluated weights are an exponential moving average
                   of the trained ones (momentum 0.99, Adam's use_ema);
  mixup            each training image blended with another (Beta(0.2, 0.2));
  progressive      the first half of the epochs at 3/4 of the side, then the
                   full side (small images first);
  no_smoothing     label smoothing 0;
  side_160         160 px instead of 128.
XLA is left out: bench/levers measured it 25x slower on this CPU.
A short timed fit first measures each recipe's seconds per step, which sets its
epochs so that its training fits --budget-s; the schedule then spans exactly
those epochs. Reports steps/s, epochs and the final eval accuracy (and the
best epoch's), with each recipe's accuracy gain over float32. Writes
bench/results/recipes.json. Not a timed test.
"""
import argparse
import time

import numpy as np

from bench.common import machine_info, print_table, write_results
from bench.photo_models import load_folder, normalized

RECIPES = ("float32", "mixed_bfloat16", "ema", "mixup", "progressive", "no_smoothing",
           "side_160")
SIDE, BATCH, LR, SMOOTHING = 128, 64, 2e-3, 0.1
EMA_MOMENTUM, MIXUP_ALPHA, PROGRESSIVE_SHARE = 0.99, 0.2, 0.5


def _mixup(images, labels, seed):
    """Per-example Beta(a, a) blends with a reversed copy of the batch."""
    import tensorflow as tf
    shape = [tf.shape(images)[0]]
    a = tf.random.stateless_gamma(shape, seed, alpha=MIXUP_ALPHA)
    b = tf.random.stateless_gamma(shape, seed + 1, alpha=MIXUP_ALPHA)
    lam = a / (a + b)
    return (images * lam[:, None, None, None] + images[::-1] * (1 - lam[:, None, None, None]),
            labels * lam[:, None] + labels[::-1] * (1 - lam[:, None]))


def _batches(x, onehot, recipe: str, side: int, seed: int, batch: int):
    import tensorflow as tf
    from modules.augment import Augmentation, augment_batches
    data = (tf.data.Dataset.from_tensor_slices((x, onehot)).shuffle(len(x), seed=seed)
            .repeat().batch(batch, drop_remainder=True))
    if side != x.shape[1]:
        data = data.map(lambda i, y: (tf.image.resize(i, [side, side], antialias=True), y))
    data = augment_batches(data, Augmentation(crop=0, flip=True, color=0.2, scale=0.25), seed)
    if recipe == "mixup":
        data = data.enumerate().map(
            lambda step, b: _mixup(b[0], b[1], tf.stack([np.int64(seed), step])))
    return data.prefetch(2)


def _model(recipe: str, classes: int, learning_rate, side: int):
    import tf_keras as keras
    from modules.photo_model import build_photo
    keras.mixed_precision.set_global_policy(
        "mixed_bfloat16" if recipe == "mixed_bfloat16" else "float32")
    side = None if recipe == "progressive" else side  # one model for both sides
    model = build_photo((side, side, 3), classes)
    ema = {"use_ema": True, "ema_momentum": EMA_MOMENTUM} if recipe == "ema" else {}
    smoothing = 0.0 if recipe == "no_smoothing" else SMOOTHING
    model.compile(optimizer=keras.optimizers.Adam(learning_rate, **ema),
                  loss=keras.losses.CategoricalCrossentropy(label_smoothing=smoothing),
                  metrics=[keras.metrics.CategoricalAccuracy(name="accuracy")])
    return model


def _seconds_per_step(recipe: str, x, onehot, side: int, seed: int, batch: int) -> float:
    """The median step after the first 5: tracing and the dataset's start (a copy of the
    images, the shuffle buffer filling) are paid once per fit, not per step."""
    import tf_keras as keras
    model = _model(recipe, onehot.shape[1], LR, side)
    ends = []
    timer = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda *_: ends.append(time.perf_counter()))
    model.fit(_batches(x, onehot, recipe, side, seed, batch), steps_per_epoch=20, epochs=1,
              verbose=0, callbacks=[timer])
    return float(np.median(np.diff(ends[5:])))


def run_recipe(recipe: str, x, y, train, budget_s: float, seed: int,
               batch: int = BATCH) -> dict:
    """Trains `recipe` for about `budget_s`; its epochs, seconds and eval accuracy."""
    import tf_keras as keras
    from modules.schedule import WarmupCosine
    keras.utils.set_random_seed(seed)
    onehot = np.eye(int(y.max()) + 1, dtype=np.float32)[y]
    xt, yt, xe, ye = x[train], onehot[train], x[~train], onehot[~train]
    steps = max(1, len(xt) // batch)
    sides = ([round(x.shape[1] * 0.75 / 8) * 8, x.shape[1]] if recipe == "progressive"
             else [x.shape[1]])
    per_step = [_seconds_per_step(recipe, xt, yt, side, seed, batch) for side in sides]
    epoch_s = float(np.mean(per_step)) * steps
    epochs = max(2, int(budget_s / epoch_s))
    model = _model(recipe, onehot.shape[1], WarmupCosine(LR, steps, steps * epochs),
                   x.shape[1])
    accuracy, started = [], time.perf_counter()
    first = max(1, round(epochs * PROGRESSIVE_SHARE)) if recipe == "progressive" else epochs
    for side, (start, end) in zip(sides, [(0, first), (first, epochs)]):
        if end > start:
            history = model.fit(_batches(xt, yt, recipe, side, seed, batch), initial_epoch=start,
                                epochs=end, steps_per_epoch=steps, verbose=0,
                                validation_data=(xe, ye), validation_batch_size=128)
            accuracy += history.history["val_accuracy"]
    train_s = time.perf_counter() - started
    final = model.evaluate(xe, ye, batch_size=128, verbose=0, return_dict=True)["accuracy"]
    return {"recipe": recipe, "side": sides[-1], "steps_per_s": 1 / float(np.mean(per_step)),
            "epochs": epochs, "train_s": train_s, "final_acc": float(final),
            "best_acc": float(max(accuracy)), "val_accuracy": [round(a, 4) for a in accuracy]}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a class-per-folder photo tree")
    parser.add_argument("--budget-s", type=float, default=150.0,
                        help="training seconds per recipe")
    parser.add_argument("--only", nargs="*", choices=RECIPES, help="recipes (default: all)")
    parser.add_argument("--batch-size", type=int, default=BATCH)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import tensorflow as tf  # noqa: F401  (before tf_keras, with TF_USE_LEGACY_KERAS)
    recipes = ["float32", *(r for r in (args.only or RECIPES) if r != "float32")]
    decoded = {}
    rows = []
    for recipe in recipes:
        side = 160 if recipe == "side_160" else SIDE
        if side not in decoded:
            images, labels, train = load_folder(args.data, side)
            decoded[side] = (normalized(images, train), labels, train)
        rows.append(run_recipe(recipe, *decoded[side], args.budget_s, args.seed,
                               args.batch_size))
        rows[-1]["gain"] = rows[-1]["final_acc"] - rows[0]["final_acc"]
        print_table(rows[-1:], ["recipe", "side", "steps_per_s", "epochs", "train_s",
                                "final_acc", "best_acc", "gain"])
    print_table(rows, ["recipe", "side", "steps_per_s", "epochs", "train_s", "final_acc",
                       "best_acc", "gain"])
    return write_results("recipes", {"machine": machine_info(), "data": args.data,
                                     "budget_s": args.budget_s, "batch": args.batch_size,
                                     "rows": rows})


if __name__ == "__main__":
    main()
