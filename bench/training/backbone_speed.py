"""Keras Applications backbones on this CPU, and fine-tuning a saved backbone on real photos.

    bash scripts/bench.sh training/backbone_speed  # images/s of each backbone
    bash scripts/bench.sh training/backbone_speed --flowers ~/datasets/flowers_photos

Throughput: each backbone at its planned CPU size (modules/network_registry.py's
BACKBONE_SIZE_BY_HARDWARE), fed from memory, in the two phases of
fine-tuning (head only: backbone frozen; then its top blocks open) and in
inference; the built-in photo model at the same size is the baseline (ratio
1.00). Images/s after one warm-up step.

--flowers: two `imagepipe run`s, as a user without ImageNet access would do
it. Run A trains mobilenet_v2 from scratch (--weights none) and leaves its
backbone's weights in the Trainer's model_run; run B fine-tunes that file
(--weights FILE) in two phases with the planned defaults. Records each
phase's seconds per epoch and accuracy. Writes bench/results/backbones.json.
Not a timed test: the flowers part is long (run time: docs/performance.md;
results: docs/models.md).
"""
import argparse
import glob
import os
import shutil
import statistics
import tempfile
import time

from bench.common import (imagepipe_command, machine_info, print_table, read_summary,
                          run_sampled, write_results)

BATCH = 32


def _rate(step, images: int, steps: int) -> float:
    step()  # traces and warms up
    started = time.perf_counter()
    for _ in range(steps):
        step()
    return images * steps / (time.perf_counter() - started)


def throughput_row(name: str, side: int, steps: int) -> dict:
    """Images/s of `name` (a backbone, or 'photo') training head-only, fine-tuning, predicting."""
    import tensorflow as tf
    import tf_keras as keras
    from modules.networks.backbones import backbone_of, build_backbone_model, unfreeze_top
    from modules.networks.keras_model import compile_model
    from modules.networks.photo import build_photo
    keras.backend.clear_session()
    x = tf.random.normal([BATCH, side, side, 3])
    y = tf.one_hot(tf.random.uniform([BATCH], 0, 5, tf.int32), 5)
    if name == "photo":
        model = compile_model(build_photo((side, side, 3), 5), "adam", 1e-3, 1)
        phases = {"train_img_s": model}
    else:
        model = build_backbone_model(name, (side, side, 3), 5, None, [0.5] * 3, [0.25] * 3)
        backbone_of(model).trainable = False
        phases = {"head_img_s": compile_model(model, "adam", 1e-3, 1)}
    row = {"model": name, "size": side, "params": model.count_params()}
    for column, compiled in phases.items():
        row[column] = _rate(lambda: compiled.train_on_batch(x, y), BATCH, steps)
    if name != "photo":
        unfreeze_top(model, name)
        compile_model(model, "adam", 1e-4, 1)
        row["fine_tune_img_s"] = _rate(lambda: model.train_on_batch(x, y), BATCH, steps)
    predict = tf.function(lambda images: model(images, training=False))
    row["predict_img_s"] = _rate(lambda: predict(x).numpy(), BATCH, steps)
    return row


def throughput(steps: int) -> list:
    from modules.params import BACKBONE_NAMES
    from modules.network_registry import BACKBONE_SIZE_BY_HARDWARE
    side = BACKBONE_SIZE_BY_HARDWARE["cpu"]
    rows = [throughput_row(name, side, steps) for name in ("photo", *BACKBONE_NAMES)]
    base = rows[0]
    for row in rows:
        for column in ("head_img_s", "fine_tune_img_s", "train_img_s"):
            row.setdefault(column, "")
        row["train_ratio"] = (row["fine_tune_img_s"] or row["train_img_s"]) / \
            base["train_img_s"]
        row["predict_ratio"] = row["predict_img_s"] / base["predict_img_s"]
    print_table(rows, ["model", "size", "params", "head_img_s", "fine_tune_img_s",
                       "train_img_s", "train_ratio", "predict_img_s", "predict_ratio"])
    return rows


def _phases(summary: dict) -> list:
    """Per phase: epochs, median seconds per epoch, best and last validation accuracy."""
    rows = []
    for phase in (summary.get("training") or {}).get("phases", []):
        accuracy = phase.get("val_accuracy") or [None]
        rows.append({"phase": phase["phase"], "epochs": len(phase["epoch_seconds"]),
                     "s_per_epoch": statistics.median(phase["epoch_seconds"]),
                     "best_val_acc": max(accuracy), "last_val_acc": accuracy[-1]})
    return rows


def _run(label: str, data: str, output: str, *flags) -> dict:
    run = run_sampled(imagepipe_command("run", "--data", data, "--output", output,
                                        "--model", "mobilenet_v2", *flags))
    summary = read_summary(output)
    peak = max((rss for _, rss in run["samples"]), default=0) / 1e6
    return {"run": label, "flags": " ".join(flags), "wall_s": run["wall_s"],
            "peak_rss_mb": peak, "eval_accuracy": summary["eval"]["accuracy"],
            "blessed": summary["eval"]["blessed"], "trainer_s": summary["timings_s"]["Trainer"],
            "phases": _phases(summary), "tflite": summary["pushed"].get("tflite_gate")}


def flowers(data: str, scratch_epochs: int) -> list:
    """Run A from scratch, then run B fine-tuning A's saved backbone."""
    root = tempfile.mkdtemp(prefix="imagepipe-bench-backbones-")
    try:
        first = _run("A: from scratch", data, os.path.join(root, "a"), "--weights", "none",
                     "--epochs", str(scratch_epochs), "--accuracy-threshold", "0")
        weights = glob.glob(os.path.join(root, "a", "tfx", "Trainer", "model_run", "*",
                                         "backbone_weights.h5"))[0]
        kept = os.path.join(root, "mobilenet_v2_flowers_notop.h5")
        shutil.copy(weights, kept)
        second = _run("B: fine-tune A's file", data, os.path.join(root, "b"),
                      "--weights", kept, "--accuracy-threshold", "0")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = [first, second]
    for run in rows:
        print(f"{run['run']}: eval accuracy {run['eval_accuracy']:.4f}, Trainer "
              f"{run['trainer_s']:.0f}s, wall {run['wall_s']:.0f}s, peak "
              f"{run['peak_rss_mb']:.0f} MB")
        print_table(run["phases"], ["phase", "epochs", "s_per_epoch", "best_val_acc",
                                    "last_val_acc"])
    return rows


def _previous() -> dict:
    import json
    from bench.common import RESULTS_DIR
    path = os.path.join(RESULTS_DIR, "backbones.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="timed batches per phase")
    parser.add_argument("--flowers", help="a class-per-folder photo tree for the two runs")
    parser.add_argument("--scratch-epochs", type=int, default=12,
                        help="epochs of run A (from scratch)")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    import tensorflow as tf  # noqa: F401  (before tf_keras, with TF_USE_LEGACY_KERAS)
    # A part run alone keeps the other part's last figures (same file).
    payload = {**_previous(), "machine": machine_info(), "batch": BATCH}
    if not args.skip_throughput:
        payload["throughput"] = throughput(args.steps)
    if args.flowers:
        payload["flowers"] = {"data": args.flowers, "runs": flowers(args.flowers,
                                                                    args.scratch_epochs)}
    return write_results("backbones", payload)


if __name__ == "__main__":
    main()
