"""Batch prediction (`imagepipe predict --data`, Beam RunInference) against the one-image loop.

    bash scripts/bench.sh serving/batch_predict --idx ~/fashion_mnist  # 1,000 and 10,000
    bash scripts/bench.sh serving/batch_predict --images ~/photos --model outputs/serving/imagepipe

Run time on 2 cores: docs/performance.md (the benchmarks table).

Images: the first N files of --images (linked), or the first N images of an
MNIST-style IDX folder (--idx) written as PNGs; both into a temp folder that
is deleted at the end. Model: --model, else the model that `imagepipe run`
pushes to --output (trained once there on the bundled digits).

The baseline, run in the same invocation, is `imagepipe predict IMAGE...` over
the same files: prediction.predict.predict_files, one signature call per
image. Each variant is the real command in a fresh process, timed from start
to exit (imports and model load included), its process tree's RSS sampled
(bench.common.run_sampled), so the batch run's peak at 1,000 and 10,000
images shows whether its memory stays flat. `top1_agree` is the share of
images whose top-1 class is the same in both. Prints a table and writes
bench/results/batch_predict.json.
"""
import argparse
import gzip
import json
import os
import shutil
import tempfile

from bench.common import imagepipe_command, machine_info, print_table, run_sampled, write_results

# bench/serving/model_formats.py trains its model there too.
DEFAULT_OUTPUT = "/tmp/imagepipe-bench-serving"


def write_idx_pngs(idx_dir: str, count: int, folder: str) -> None:
    """The first `count` images of `idx_dir`'s train-images-idx3-ubyte[.gz], as PNGs."""
    from PIL import Image

    from components.image_example_gen.readers.arrays import parse_idx
    name = next((n for n in ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz")
                 if os.path.exists(os.path.join(idx_dir, n))), None)
    if name is None:
        raise SystemExit(f"--idx {idx_dir}: no train-images-idx3-ubyte[.gz]")
    with open(os.path.join(idx_dir, name), "rb") as f:
        data = f.read()
    images = parse_idx(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data, name)
    if len(images) < count:
        raise SystemExit(f"--idx {idx_dir}: {len(images)} images, fewer than {count}")
    for i in range(count):
        Image.fromarray(images[i]).save(os.path.join(folder, f"{i:06d}.png"))


def link_images(source: str, count: int, folder: str) -> None:
    """Symlinks to the first `count` image files under `source`."""
    from prediction.batch_io import iter_image_paths
    found = 0
    for found, path in enumerate(iter_image_paths(source), 1):
        os.symlink(os.path.abspath(path), os.path.join(folder, f"{found:06d}_"
                                                       f"{os.path.basename(path)}"))
        if found == count:
            return
    raise SystemExit(f"--images {source}: {found} image files, fewer than {count}")


def _measure(mode: str, folder: str, model: str, out: str) -> dict:
    """One variant as the user runs it, a fresh `imagepipe predict` process: wall
    seconds, peak RSS of its process tree, and {path: top-1 class}."""
    from prediction.batch_io import iter_image_paths
    if mode == "loop":
        args = sorted(iter_image_paths(folder))
    else:
        args = ["--data", folder, "--output", out]
    run = run_sampled(imagepipe_command("predict", "--model", model, "--top-k", "1", *args))
    if mode == "loop":  # "path: class (p)" lines
        top1 = dict(line.split(": ", 1) for _, line in run["lines"] if line.startswith(folder))
        top1 = {path: rest.split(" (")[0] for path, rest in top1.items()}
    else:
        with open(out) as f:
            top1 = {row["path"]: row.get("class") for row in map(json.loads, f)}
    return {"seconds": run["wall_s"], "top1": top1,
            "peak_rss_mb": max(rss for _, rss in run["samples"]) / 1e6}


def _measure_size(count: int, args, model: str, workdir: str) -> list:
    folder = os.path.join(workdir, f"images_{count}")
    os.makedirs(folder)
    if args.images:
        link_images(args.images, count, folder)
    else:
        write_idx_pngs(args.idx, count, folder)
    rows, top1 = [], {}
    for mode in ("loop", "batch"):
        result = _measure(mode, folder, model, os.path.join(workdir, f"batch_{count}.jsonl"))
        top1[mode] = result["top1"]
        rows.append({"mode": mode, "images": count, "seconds": result["seconds"],
                     "images_per_s": count / result["seconds"],
                     "peak_rss_mb": result["peak_rss_mb"]})
    agree = sum(top1["loop"].get(p) == c for p, c in top1["batch"].items())
    for row in rows:
        row["ratio"] = row["images_per_s"] / rows[0]["images_per_s"]
        row["top1_agree"] = agree / count
    shutil.rmtree(folder)
    return rows


def _model(args) -> str:
    if args.model:
        return args.model
    from bench.serving.model_formats import _ensure_run  # trains on the bundled digits if needed
    return _ensure_run(args.output)["pushed"]["serving"]


def main(argv=None) -> dict:
    """Runs both variants at every size; prints the table, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--images", help="a folder of image files; the first N are used")
    source.add_argument("--idx", help="an MNIST-style IDX folder (train-images-idx3-ubyte)")
    parser.add_argument("--model", help="a pushed SavedModel (default: train one in --output)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="where a default run goes")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args(argv)
    model = _model(args)
    workdir = tempfile.mkdtemp(prefix="imagepipe-bench-batch-")
    try:
        rows = [row for count in args.sizes for row in _measure_size(count, args, model,
                                                                     workdir)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_table(rows, ["mode", "images", "seconds", "images_per_s", "ratio", "peak_rss_mb",
                       "top1_agree"])
    return write_results("batch_predict", {
        "machine": machine_info(), "model": model, "source": args.images or args.idx,
        "rows": rows})


if __name__ == "__main__":
    main()
