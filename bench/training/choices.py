"""The photo plan's choices measured on a validation split carved from train, never on eval.

    bash scripts/bench.sh training/choices --data ~/datasets/flowers_photos
    bash scripts/bench.sh training/choices --data DIR --only plan epochs_20 --keep /tmp/choices

A plan rule chosen on the eval split makes the eval accuracy it reports optimistic
(docs/training.md), so this bench never reads that split. It splits --data as a run
does (the path hash, then every copy moved to its duplicate group's split: ingestion's
own code), keeps the run's train images only, and carves VALIDATION_PERCENT of them by
a second hash of each path, independent of the first, copies again kept on one side.
It lays them out as train/ and validation/ folders of symbolic links, which ingestion
keeps as given splits, so the pipeline's "eval" split of that tree is the validation
part. Then one `imagepipe run` per variant, each `--seed 0 --time-budget none
--warm-start off` (the same training whatever the host's load; no run starts from
another's weights), and each variant differs from `plan` in one setting:
  plan       the photo plan's defaults (its epochs, crop, flips, test-time flip);
  crop_0.5   a weaker crop: random resized crops keep at least half of the area;
  epochs_20, epochs_60  20 and 60 epochs (the plan trains 40 on flowers' carved train).
Each model's validation images are scored with one view and with the mirror image
averaged (the trained weights, outside the pipeline), which measures the test-time
flip on every model: the difference, its paired 95% interval and the discordant
images. Each variant is compared with `plan` on the same images, as served (the
mirror average). Also recorded: the Keras validation curve (one view, the epochs the
Trainer validated) and each run's wall time. Writes bench/results/choices.json.
Run time: 34 minutes on flowers, 2 cores shared with other work
(docs/results/2026-11-29-choices-on-validation.md).
"""
import argparse
import hashlib
import os
import shutil
import tempfile
from typing import Dict, List

import numpy as np

from bench.common import (imagepipe_command, machine_info, print_table, read_summary,
                          run_sampled, write_results)

VALIDATION_PERCENT = 20
TRAIN, VALIDATION = "train", "validation"  # the tree's folders: ingestion's TRAIN and EVAL
COMMON = ["--seed", "0", "--time-budget", "none", "--warm-start", "off"]
VARIANTS = {"plan": [], "crop_0.5": ["--augment-scale", "0.5"],
            "epochs_20": ["--epochs", "20"], "epochs_60": ["--epochs", "60"]}


def validation_bucket(relpath: str) -> int:
    """0-99 from a hash of the path salted apart from ingestion's split hash
    (options.split_index hashes the bare path), so the two are independent."""
    digest = hashlib.sha256(f"validation:{relpath}".encode("utf-8")).hexdigest()
    return int(digest, 16) % 100


def carve(splits: Dict[str, str], percent: int = VALIDATION_PERCENT) -> Dict[str, str]:
    """{relpath: TRAIN or VALIDATION} of the run's train images (`splits`: {relpath:
    "train" | "eval"}, as the run splits); eval images are left out altogether."""
    from core.contract import TRAIN as RUN_TRAIN
    return {path: VALIDATION if validation_bucket(path) < percent else TRAIN
            for path, split in splits.items() if split == RUN_TRAIN}


def run_items(root: str, eval_percent: int = 20) -> list:
    """HealthItems of `root`'s images with the splits a run gives them: the path hash,
    then each copy in its duplicate group's split (the code `imagepipe inspect` runs)."""
    from components.image_example_gen.data_health.groups import HealthItem, near_lists
    from components.image_example_gen.encoding import encode
    from components.image_example_gen.health import split_together
    from components.image_example_gen.readers.folder_tree import splits_hashed
    from components.image_example_gen.readers.formats import list_dataset
    from components.image_example_gen.readers.units import read_file_jobs
    from settings.config import PipelineConfig
    options = PipelineConfig.from_values(data=root, eval_percent=eval_percent).ingest_options()
    listing = list_dataset(root, options)
    if not splits_hashed(listing) or listing.format != "folder":
        raise ValueError(f"--data {root}: needs a class-per-folder tree without split folders")
    jobs = read_file_jobs(listing.files, root, listing.classes, options)
    items = [HealthItem(*row) for row in encode.hash_files(jobs, options.max_pixels)
             if isinstance(row, list)]
    return split_together(items, near_lists(items), True)[0]


def carve_items(items: list, percent: int = VALIDATION_PERCENT) -> Dict[str, str]:
    """carve() of the run's train images, then each copy moved to its group's side, by
    the rule ingestion applies: no validation image has a copy left in train."""
    from components.image_example_gen.data_health.groups import near_lists
    from components.image_example_gen.health import split_together
    carved = carve({item.relpath: item.split for item in items}, percent)
    kept = [item._replace(split=carved[item.relpath]) for item in items
            if item.relpath in carved]
    return {item.relpath: item.split for item in split_together(kept, near_lists(kept), True)[0]}


def lay_out(root: str, carved: Dict[str, str], tree: str) -> Dict[str, int]:
    """<tree>/<side>/<class>/<file> links to `root`'s images; the count on each side."""
    counts = {TRAIN: 0, VALIDATION: 0}
    for relpath, side in sorted(carved.items()):
        target = os.path.join(tree, side, relpath)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.path.abspath(os.path.join(root, relpath)), target)
        counts[side] += 1
    return counts


def paired(first: np.ndarray, second: np.ndarray) -> dict:
    """accuracy(first) - accuracy(second) of two right/wrong vectors on the same images:
    the difference, its 95% interval (Newcombe's, core/intervals.py) and the
    discordant counts."""
    from core.intervals import paired_difference
    both, neither = int(np.sum(first & second)), int(np.sum(~first & ~second))
    first_only, second_only = int(np.sum(first & ~second)), int(np.sum(~first & second))
    low, high = paired_difference(both, first_only, second_only, neither)
    return {"difference": float(first.mean() - second.mean()), "interval": [low, high],
            "first_only": first_only, "second_only": second_only, "n": len(first)}


def _uris(output: str) -> dict:
    """The latest run's Examples, TransformGraph, Model and ModelRun URIs."""
    from bench.training.trainer_input import artifact_uris
    from settings.config import PipelineConfig
    from report.collect import artifact_uris as trained_uris
    return {**artifact_uris(output, "imagepipe"),
            **trained_uris(PipelineConfig.from_values(output=output))}


def validation_arrays(uris: dict):
    """(images, labels) of the run's eval split (the validation part) through its
    transform graph, as the Trainer and the Evaluator see them."""
    import tensorflow as tf
    import tensorflow_transform as tft
    from core.contract import EVAL, IMAGE_XF, LABEL_XF, split_dir
    from core.storage import files
    output = tft.TFTransformOutput(uris["transform_graph"])
    folder = split_dir(uris["examples"], EVAL)
    records = [os.path.join(folder, name) for name in files.list_dir(folder)[1]]
    layer, spec = output.transform_features_layer(), output.raw_feature_spec()
    images, labels = [], []
    for batch in tf.data.TFRecordDataset(records, compression_type="GZIP").batch(128):
        xf = layer(tf.io.parse_example(batch, spec))
        images.append(xf[IMAGE_XF].numpy())
        labels.append(xf[LABEL_XF].numpy())
    return np.concatenate(images), np.concatenate(labels).reshape(-1)


def score_views(uris: dict) -> dict:
    """Right/wrong per validation image with one view and with the mirror average, by
    the trained network (the exported Keras model, without its signatures' flip)."""
    import tf_keras as keras
    from tfx.utils import path_utils
    model = keras.models.load_model(path_utils.serving_model_dir(uris["Model"]),
                                    compile=False)
    images, labels = validation_arrays(uris)
    one = model.predict(images, batch_size=64, verbose=0)
    mirrored = model.predict(images[:, :, ::-1], batch_size=64, verbose=0)
    return {"one_view": one.argmax(1) == labels,
            "mirror_average": (one + mirrored).argmax(1) == labels}


def _curve(model_run_uri: str) -> Dict[int, float]:
    """The Keras validation accuracy (one view) at each epoch the Trainer validated."""
    from report.collect import training_history
    return training_history(model_run_uri)["validation"]["accuracy"]


def run_variant(name: str, tree: str, output: str, extra: List[str]) -> dict:
    """One `imagepipe run` of the tree (reused if `output` holds a finished one of this
    bench); its row, and the right/wrong vectors."""
    wall_file = os.path.join(output, "bench_wall_s.txt")
    if not os.path.exists(wall_file):
        shutil.rmtree(output, ignore_errors=True)  # an unfinished run starts over
        run = run_sampled(imagepipe_command("run", "--data", tree, "--output", output,
                                            *COMMON, *extra, *VARIANTS[name]), interval=1.0)
        with open(wall_file, "w") as f:
            f.write(f"{run['wall_s']:.1f}")
    with open(wall_file) as f:
        wall_s = float(f.read())
    summary, uris = read_summary(output), _uris(output)
    right = score_views(uris)
    flip = paired(right["mirror_average"], right["one_view"])
    row = {"variant": name, "epochs": len((summary.get("training") or {}).get("epoch_seconds")
                                          or []),
           "wall_s": wall_s, "n": flip["n"], "one_view": float(right["one_view"].mean()),
           "mirror": float(right["mirror_average"].mean()),
           # The Evaluator's (mirror averaged where the plan serves the flip), and the
           # validation images it found a copy of in train (none, if the carve is right).
           "pipeline_accuracy": summary["eval"].get("accuracy"),
           "leaked": summary["eval"].get("leaked"),
           "trainer_s": (summary.get("timings_s") or {}).get("Trainer"),
           "flip_gain": flip["difference"], "flip_interval": flip["interval"],
           "flip_discordant": [flip["first_only"], flip["second_only"]],
           "curve": {str(k): round(v, 4) for k, v in _curve(uris["ModelRun"]).items()}}
    return {"row": row, "right": right}


def against_plan(rows: List[dict], rights: Dict[str, dict]) -> None:
    """Adds each variant's paired difference from `plan` (as served: mirror averaged)."""
    for row in rows:
        versus = paired(rights[row["variant"]]["mirror_average"],
                        rights["plan"]["mirror_average"])
        row.update(vs_plan=versus["difference"], vs_plan_interval=versus["interval"],
                   vs_plan_discordant=[versus["first_only"], versus["second_only"]])


def _interval(pair) -> str:
    return f"[{pair[0]:+.4f}, {pair[1]:+.4f}]"


def _printed(rows: List[dict]) -> None:
    print_table([{**r, "one_view": f"{r['one_view']:.4f}", "mirror": f"{r['mirror']:.4f}",
                  "flip_gain": f"{r['flip_gain']:+.4f} {_interval(r['flip_interval'])}",
                  "flip +/-": "{}/{}".format(*r["flip_discordant"]),
                  "vs_plan": f"{r['vs_plan']:+.4f} {_interval(r['vs_plan_interval'])}",
                  "vs_plan +/-": "{}/{}".format(*r["vs_plan_discordant"])} for r in rows],
                ["variant", "epochs", "wall_s", "n", "one_view", "mirror", "flip_gain",
                 "flip +/-", "vs_plan", "vs_plan +/-"])


def _tree(data: str, work: str) -> Dict[str, int]:
    """The carved tree under `work` (laid out once: a kept one is reused); its counts."""
    tree = os.path.join(work, "tree")
    if not os.path.isdir(tree):
        lay_out(data, carve_items(run_items(data)), tree + ".partial")
        os.rename(tree + ".partial", tree)
    counts = {side: sum(len(names) for _, _, names in os.walk(os.path.join(tree, side)))
              for side in (TRAIN, VALIDATION)}
    print(f"carved {counts[TRAIN]} train and {counts[VALIDATION]} validation images "
          f"from the run's train split of {data}", flush=True)
    return counts


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a class-per-folder photo tree")
    parser.add_argument("--only", nargs="*", choices=list(VARIANTS),
                        help="variants besides plan (default: all)")
    parser.add_argument("--keep", help="a folder for the tree and the runs, kept afterwards; "
                        "finished runs in it are reused")
    parser.add_argument("--run-args", default="", help="more `imagepipe run` flags for every "
                        "variant, before its own (a smoke test: '--epochs 2')")
    args = parser.parse_args(argv)
    import tensorflow as tf  # noqa: F401  (before tf_keras, with TF_USE_LEGACY_KERAS)
    work = args.keep or tempfile.mkdtemp(prefix="choices-")
    names = ["plan", *(n for n in (args.only or VARIANTS) if n != "plan")]
    rows, rights = [], {}
    try:
        counts = _tree(args.data, work)
        for name in names:
            run = run_variant(name, os.path.join(work, "tree"), os.path.join(work, name),
                              args.run_args.split())
            rows.append(run["row"])
            rights[name] = run["right"]
            against_plan(rows, rights)
            _printed(rows)
            result = write_results("choices", {
                "machine": machine_info(), "data": args.data, "run_args": args.run_args,
                "validation_percent": VALIDATION_PERCENT, "counts": counts,
                "common_flags": COMMON, "variants": VARIANTS, "rows": rows})
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return result


if __name__ == "__main__":
    main()
