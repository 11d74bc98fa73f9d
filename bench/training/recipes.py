"""Training recipes on real photos at a fixed time budget: accuracy per minute, side by side.

    bash scripts/bench.sh training/recipes --data ~/datasets/flowers_photos --budget-s 150
    bash scripts/bench.sh training/recipes --data DIR --only float32 ema mixup

The photo model at the planned side (128 px on a CPU), trained from scratch on
the folder (decoded once per side, split and normalized as bench/training/photo_candidates
does) with the Trainer's pieces: the photo plan's augmentation, warmup then
cosine, Adam at 2e-3, label smoothing 0.1. Each recipe changes one thing
(gated_sharp two):
  float32          the baseline: what the plan runs on a CPU today;
  mixed_bfloat16   Keras's mixed precision, bfloat16 compute (AVX512_BF16);
  ema              the evaluated weights are an exponential moving average
                   of the trained ones (momentum 0.99, Adam's use_ema);
  mixup            each training image blended with another (Beta(0.2, 0.2));
  cutmix           a box of each training image replaced by another's, the labels
                   mixed by the box's area (a uniform share, CutMix's Beta(1, 1));
  progressive      the first half of the epochs at 3/4 of the side, then the
                   full side (small images first);
  no_smoothing     label smoothing 0;
  side_160         160 px instead of 128;
  sgd              SGD with Nesterov momentum 0.9 at 0.05, decoupled weight
                   decay 0.002 (not on batch norm or biases), instead of Adam;
  squeeze_excite   the photo model with channel gates (squeeze-and-excitation, as
                   in MobileNetV3) in its expanded blocks;
  sharp_crops      the training photos decoded at 176 px and their random resized
                   crops taken from there at 128 px, so that a crop is less often
                   an enlargement, and blurred, than from a 128 px photo (the eval
                   photos stay whole at 128 px);
  gated_sharp      squeeze_excite and sharp_crops together.
--epochs N trains every recipe N epochs instead of fitting a budget (steps/s is
then the whole fit's, each epoch's validation and the first step's tracing
included, so it reads lower than a budget run's timed steps). --test-sides
scores each trained model again on the eval images decoded at other sides (the
same weights in a model built for that side: the network is convolutional up to
its global pooling), each alone and averaged with its mirror image; --test-crops
on central crops at the trained side (each photo decoded larger, then cropped:
objects look as large as random resized crops made them in training).
XLA is left out: bench/training/levers measured it 25x slower on this CPU.
A short timed fit first measures each recipe's seconds per step, which sets its
epochs so that its training fits --budget-s; the schedule then spans exactly
those epochs. Reports steps/s, epochs and the final eval accuracy (and the
best epoch's), with each recipe's accuracy gain over float32. Writes
bench/results/recipes.json. Not a timed test.
"""
import argparse
import time
from typing import Optional

import numpy as np

from bench.common import machine_info, print_table, write_results
from bench.training.photo_candidates import channel_stats, load_folder, normalized

RECIPES = ("float32", "mixed_bfloat16", "ema", "mixup", "cutmix", "progressive",
           "no_smoothing", "side_160", "sgd", "squeeze_excite", "sharp_crops",
           "gated_sharp")
GATED, SHARP = ("squeeze_excite", "gated_sharp"), ("sharp_crops", "gated_sharp")
SIDE, BATCH, LR, SMOOTHING = 128, 64, 2e-3, 0.1
SGD_LR, SGD_MOMENTUM, SGD_WEIGHT_DECAY = 0.05, 0.9, 0.002
EMA_MOMENTUM, MIXUP_ALPHA, PROGRESSIVE_SHARE = 0.99, 0.2, 0.5
SHARP_SIDE = 176  # sharp_crops' training decode: a whole-photo crop shrinks to SIDE


def _mixup(images, labels, seed):
    """Per-example Beta(a, a) blends with a reversed copy of the batch."""
    import tensorflow as tf
    shape = [tf.shape(images)[0]]
    a = tf.random.stateless_gamma(shape, seed, alpha=MIXUP_ALPHA)
    b = tf.random.stateless_gamma(shape, seed + 1, alpha=MIXUP_ALPHA)
    lam = a / (a + b)
    return (images * lam[:, None, None, None] + images[::-1] * (1 - lam[:, None, None, None]),
            labels * lam[:, None] + labels[::-1] * (1 - lam[:, None]))


def _cutmix(images, labels, seed):
    """Per-example boxes of a reversed copy of the batch pasted in, CutMix-style: a
    uniform share of the area, a uniform centre, the labels mixed by the area kept."""
    import tensorflow as tf
    shape, side = [tf.shape(images)[0]], images.shape[1]
    cut = tf.sqrt(tf.random.stateless_uniform(shape, seed)) * side  # box side
    centre = tf.random.stateless_uniform(shape + [2], seed + 1) * side
    low, high = centre - cut[:, None] / 2, centre + cut[:, None] / 2
    grid = tf.range(side, dtype=tf.float32) + 0.5
    rows = (grid[None] >= low[:, :1]) & (grid[None] < high[:, :1])
    cols = (grid[None] >= low[:, 1:]) & (grid[None] < high[:, 1:])
    box = tf.cast(rows[:, :, None] & cols[:, None, :], images.dtype)[..., None]
    kept = 1.0 - tf.reduce_mean(box, axis=[1, 2, 3])
    return (images * (1 - box) + images[::-1] * box,
            labels * kept[:, None] + labels[::-1] * (1 - kept[:, None]))


def _batches(x, onehot, recipe: str, side: int, seed: int, batch: int):
    import tensorflow as tf
    from modules.augment import Augmentation, augment_batches
    data = (tf.data.Dataset.from_tensor_slices((x, onehot)).shuffle(len(x), seed=seed)
            .repeat().batch(batch, drop_remainder=True))
    sharp = recipe in SHARP and x.shape[1] > side  # crops come out at `side`
    if side != x.shape[1] and not sharp:
        data = data.map(lambda i, y: (tf.image.resize(i, [side, side], antialias=True), y))
    data = augment_batches(data, Augmentation(crop=0, flip=True, color=0.2, scale=0.25), seed,
                           size=side if sharp else None)
    if recipe in ("mixup", "cutmix"):
        mix = _mixup if recipe == "mixup" else _cutmix
        data = data.enumerate().map(
            lambda step, b: mix(b[0], b[1], tf.stack([np.int64(seed), step])))
    return data.prefetch(2)


def _model(recipe: str, classes: int, learning_rate, side: int):
    import tf_keras as keras
    from modules.networks.photo import build_photo
    keras.mixed_precision.set_global_policy(
        "mixed_bfloat16" if recipe == "mixed_bfloat16" else "float32")
    side = None if recipe == "progressive" else side  # one model for both sides
    model = build_photo((side, side, 3), classes, excite=recipe in GATED)
    ema = {"use_ema": True, "ema_momentum": EMA_MOMENTUM} if recipe == "ema" else {}
    smoothing = 0.0 if recipe == "no_smoothing" else SMOOTHING
    optimizer = keras.optimizers.Adam(learning_rate, **ema)
    if recipe == "sgd":
        optimizer = keras.optimizers.SGD(learning_rate, momentum=SGD_MOMENTUM, nesterov=True,
                                         weight_decay=SGD_WEIGHT_DECAY)
        optimizer.exclude_from_weight_decay(var_names=["gamma", "beta", "bias"])
    model.compile(optimizer=optimizer,
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


def _at_sides(model, classes: int, test: dict, labels, excite: bool = False) -> dict:
    """{name: [accuracy, accuracy averaged with the mirror image]} on `test` ({name: eval
    images}), the trained weights in a model built for each set's side."""
    from modules.networks.photo import build_photo
    found = {}
    for name, images in test.items():
        resized = build_photo(images.shape[1:], classes, excite=excite)
        resized.set_weights(model.get_weights())
        plain = resized.predict(images, batch_size=128, verbose=0)
        mirrored = resized.predict(images[:, :, ::-1], batch_size=128, verbose=0)
        found[name] = [round(float(np.mean(p.argmax(1) == labels)), 4)
                       for p in (plain, plain + mirrored)]
    return found


def center_crops(data: str, side: int, fractions, stats) -> dict:
    """{"crop F": eval images}: each photo decoded at side / F and its central side x side
    kept (what a model sees of it at test time after resize-then-crop), normalized with
    `stats`, the channel statistics of the train images at `side` (the model's own)."""
    found = {}
    for fraction in fractions:
        larger = round(side / fraction)
        images, _, train = load_folder(data, larger)
        start = (larger - side) // 2
        crops = images[~train][:, start:start + side, start:start + side]
        found[f"crop {fraction:g}"] = normalized(crops, None, stats)
    return found


def run_recipe(recipe: str, x, y, train, budget_s: float, seed: int,
               batch: int = BATCH, epochs: int = 0, test: Optional[dict] = None,
               train_x=None) -> dict:
    """Trains `recipe` for about `budget_s` (or `epochs`); its epochs, seconds and eval
    accuracy, and with `test` ({side: eval images}) its accuracy at those sides.
    `train_x`: the same photos decoded at another side, to train from (sharp_crops)."""
    import tf_keras as keras
    from modules.schedule import WarmupCosine
    keras.utils.set_random_seed(seed)
    onehot = np.eye(int(y.max()) + 1, dtype=np.float32)[y]
    if recipe in SHARP and (train_x is None or train_x.shape[1] <= x.shape[1]):
        raise ValueError(f"{recipe} needs train_x: the same photos decoded larger than x")
    source = x if train_x is None else train_x
    xt, yt, xe, ye = source[train], onehot[train], x[~train], onehot[~train]
    steps = max(1, len(xt) // batch)
    sides = ([round(x.shape[1] * 0.75 / 8) * 8, x.shape[1]] if recipe == "progressive"
             else [x.shape[1]])
    # With fixed epochs nothing needs timing first: steps/s is then the training's own.
    per_step = [] if epochs else [_seconds_per_step(recipe, xt, yt, side, seed, batch)
                                  for side in sides]
    epochs = epochs or max(2, int(budget_s / (float(np.mean(per_step)) * steps)))
    rate = SGD_LR if recipe == "sgd" else LR
    model = _model(recipe, onehot.shape[1], WarmupCosine(rate, steps, steps * epochs),
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
    steps_per_s = 1 / float(np.mean(per_step)) if per_step else steps * epochs / train_s
    return {"recipe": recipe, "side": sides[-1], "steps_per_s": steps_per_s,
            "epochs": epochs, "train_s": train_s, "final_acc": float(final),
            "best_acc": float(max(accuracy)), "val_accuracy": [round(a, 4) for a in accuracy],
            "at_sides": _at_sides(model, onehot.shape[1], test or {}, y[~train],
                                  recipe in GATED)}


def _decoded(data: str, side: int, cache: dict):
    """(normalized images, labels, train mask, their channel statistics) at `side`,
    decoded once per side."""
    if side not in cache:
        images, labels, train = load_folder(data, side)
        stats = channel_stats(images, train)
        cache[side] = (normalized(images, train, stats), labels, train, stats)
    return cache[side]


def _sharp(data: str, cache: dict):
    """The photos at SHARP_SIDE, normalized with the planned side's statistics (the eval
    images'), for the sharp recipes to crop from; decoded once."""
    key = ("sharp", SHARP_SIDE)
    if key not in cache:
        images = load_folder(data, SHARP_SIDE)[0]
        cache[key] = normalized(images, None, _decoded(data, SIDE, cache)[3])
    return cache[key]


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a share of the side in (0, 1]")
    return value


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a class-per-folder photo tree")
    parser.add_argument("--budget-s", type=float, default=150.0,
                        help="training seconds per recipe")
    parser.add_argument("--epochs", type=int, default=0,
                        help="train every recipe this many epochs instead (0: the budget)")
    parser.add_argument("--test-sides", type=int, nargs="*", default=[],
                        help="also score each model on the eval images at these sides")
    parser.add_argument("--test-crops", type=_fraction, nargs="*", default=[],
                        help="also score each model trained at the planned side on central "
                             "crops of the eval images: this share of each side, decoded "
                             "larger to keep that side")
    parser.add_argument("--only", nargs="*", choices=RECIPES, help="recipes (default: all)")
    parser.add_argument("--batch-size", type=int, default=BATCH)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import tensorflow as tf  # noqa: F401  (before tf_keras, with TF_USE_LEGACY_KERAS)
    recipes = ["float32", *(r for r in (args.only or RECIPES) if r != "float32")]
    decoded, rows = {}, []
    crops = (center_crops(args.data, SIDE, args.test_crops, _decoded(args.data, SIDE, decoded)[3])
             if args.test_crops else {})
    columns = ["recipe", "side", "steps_per_s", "epochs", "train_s", "final_acc", "best_acc",
               "gain", "at_sides"]
    for recipe in recipes:
        side = 160 if recipe == "side_160" else SIDE
        test = dict(crops) if side == SIDE else {}  # crops at the planned side only
        for test_side in args.test_sides:
            images, _, train, _ = _decoded(args.data, test_side, decoded)
            test[test_side] = images[~train]
        rows.append(run_recipe(recipe, *_decoded(args.data, side, decoded)[:3], args.budget_s,
                               args.seed, args.batch_size, args.epochs, test,
                               _sharp(args.data, decoded) if recipe in SHARP else None))
        rows[-1]["gain"] = rows[-1]["final_acc"] - rows[0]["final_acc"]
        print_table(rows[-1:], columns)
    print_table(rows, columns)
    return write_results("recipes", {"machine": machine_info(), "data": args.data,
                                     "budget_s": args.budget_s, "epochs": args.epochs,
                                     "batch": args.batch_size, "rows": rows})


if __name__ == "__main__":
    main()
