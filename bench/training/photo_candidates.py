"""Choose the photo model by measuring: candidates trained from scratch on a photo folder.

    bash scripts/bench.sh training/photo_candidates --data ~/datasets/flowers_photos
    bash scripts/bench.sh training/photo_candidates --data DIR --sizes 96 128 --epochs 12 \
        --only photo

Decodes the folder once at each size (PIL, antialiased resize), splits it by
the same path hash as ingestion (80/20), normalizes per channel with the train
split's statistics, as Transform does, and trains each candidate with the
Trainer's own pieces: modules/augment (the photo plan's augmentation),
modules/schedule (warmup then cosine), label smoothing 0.1, Adam. Reports
seconds per epoch (after the first) and the best and last eval accuracy.
Writes bench/results/photo_models.json. Not a timed test: it takes minutes
per candidate on 2 cores.
"""
import argparse
import os
import time

import numpy as np

from bench.common import machine_info, print_table, write_results


def load_folder(root: str, size: int):
    """(images uint8 [n, size, size, 3], labels, train mask), split as ingestion splits."""
    from PIL import Image
    from components.image_example_gen.options import split_index
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    images, labels, train = [], [], []
    for label, name in enumerate(classes):
        for file in sorted(os.listdir(os.path.join(root, name))):
            relpath = f"{name}/{file}"
            with Image.open(os.path.join(root, relpath)) as image:
                image = image.convert("RGB").resize((size, size), Image.BILINEAR,
                                                    reducing_gap=None)
                images.append(np.asarray(image))
            labels.append(label)
            train.append(split_index(relpath, [80, 100]) == 0)
    return np.stack(images), np.array(labels), np.array(train)


def channel_stats(images: np.ndarray, train: np.ndarray):
    """(mean, std) per channel of the train split's images scaled to [0, 1]."""
    x = images[train].astype(np.float32) / 255.0
    return x.mean(axis=(0, 1, 2)), x.std(axis=(0, 1, 2))


def normalized(images: np.ndarray, train: np.ndarray, stats=None):
    """Scaled to [0, 1], then per-channel standardized on the train split's statistics
    (or `stats`, another set's)."""
    mean, std = channel_stats(images, train) if stats is None else stats
    return (images.astype(np.float32) / 255.0 - mean) / std


def candidates():
    """name -> builder(input_shape, classes), from modules/networks/photo.py's blocks."""
    import functools
    from modules.networks.photo import MOBILENET_V2_STAGES, build_photo
    return {"photo": build_photo,
            "photo_deep": functools.partial(build_photo, stages=MOBILENET_V2_STAGES,
                                            head_channels=640)}


def train_one(name, build, x, y, train, epochs: int, batch: int, seed: int) -> dict:
    """Trains one candidate; its per-epoch eval accuracy and steady seconds per epoch."""
    import tensorflow as tf
    import tf_keras as keras
    from modules.augment import Augmentation, augment_batches
    from modules.networks.keras_model import compile_model
    from modules.params import TrainerParams
    from modules.schedule import Schedule, learning_rate
    keras.utils.set_random_seed(seed)
    classes = int(y.max()) + 1
    onehot = np.eye(classes, dtype=np.float32)[y]
    steps = int(train.sum()) // batch
    aug = Augmentation(crop=0, flip=True, color=0.2, scale=0.25)
    data = augment_batches(tf.data.Dataset.from_tensor_slices((x[train], onehot[train]))
                           .shuffle(int(train.sum()), seed=seed).repeat()
                           .batch(batch, drop_remainder=True), aug, seed).prefetch(2)
    params = TrainerParams(
        model="photo", batch_size=batch, epochs=epochs, train_steps=None, eval_steps=None,
        optimizer="adam", learning_rate=2e-3, warmup_epochs=1.0, early_stopping_patience=0,
        label_smoothing=0.1, augment_crop=0, augment_scale=0.25, augment_flip=True,
        augment_color=0.2, cache_bytes=0, steps_per_execution=1,
        tensorboard_update_freq=100, tpu=None, full_precision=True, seed=seed,
        examples_budget=900_000, min_epochs=3, max_epochs=40,
        disk_headroom=2 << 30, workers=1, rendezvous_s=300.0)
    model = compile_model(build(x.shape[1:], classes), "adam",
                          learning_rate(params, Schedule(epochs, steps, 1)), 1, 0.1)
    times = []
    timer = keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda e, logs: times.append(time.perf_counter()),
        on_epoch_end=lambda e, logs: times.append(time.perf_counter()))
    history = model.fit(data, epochs=epochs, steps_per_epoch=steps, verbose=2,
                        validation_data=(x[~train], onehot[~train]), validation_batch_size=128,
                        callbacks=[timer])
    accuracy = history.history["val_accuracy"]
    epoch_s = [times[i + 1] - times[i] for i in range(0, len(times), 2)]
    return {"model": name, "params": model.count_params(), "size": x.shape[1],
            "epochs": epochs, "s_per_epoch": float(np.median(epoch_s[1:] or epoch_s)),
            "train_s": float(sum(epoch_s)), "best_acc": float(max(accuracy)),
            "last_acc": float(accuracy[-1]), "val_accuracy": [round(a, 4) for a in accuracy]}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a class-per-folder photo tree")
    parser.add_argument("--sizes", type=int, nargs="+", default=[96, 128])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--only", nargs="*", help="candidate names (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import tensorflow as tf  # noqa: F401  (before tf_keras, with TF_USE_LEGACY_KERAS)
    rows = []
    for size in args.sizes:
        started = time.perf_counter()
        images, labels, train = load_folder(args.data, size)
        x = normalized(images, train)
        print(f"decoded {len(images)} images at {size}px in "
              f"{time.perf_counter() - started:.1f}s; train {int(train.sum())}", flush=True)
        for name, build in candidates().items():
            if args.only and name not in args.only:
                continue
            rows.append(train_one(name, build, x, labels, train, args.epochs,
                                  args.batch_size, args.seed))
            print_table(rows[-1:], ["model", "size", "params", "s_per_epoch", "best_acc",
                                    "last_acc"])
    print_table(rows, ["model", "size", "params", "epochs", "s_per_epoch", "train_s",
                       "best_acc", "last_acc"])
    return write_results("photo_models", {"machine": machine_info(), "data": args.data,
                                          "batch_size": args.batch_size, "rows": rows})


if __name__ == "__main__":
    main()
