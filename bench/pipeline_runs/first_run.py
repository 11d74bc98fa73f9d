"""The first run a newcomer sees, against an earlier commit's and TFX's own MNIST example.

    bash scripts/bench.sh pipeline_runs/first_run                     # HEAD against HEAD~1
    bash scripts/bench.sh pipeline_runs/first_run --baseline v1 --repeat 3
    bash scripts/bench.sh pipeline_runs/first_run --tfx-example       # and TFX's example

Each run is `imagepipe run` with default flags on the bundled digits, cold
(a fresh output folder), in a fresh process as a user types it. The baseline
is the `--baseline` commit checked out in a temporary git worktree and run
with this environment's packages, in the same session, alternating with this
tree's runs, so that the machine's load falls on both alike. Per-component
seconds and the pipeline's total come from summary.json; wall time includes
start-up and the report.

`--tfx-example` also runs TFX's own MNIST example (tfx/examples/mnist, its
module file and its 5,000 training steps, as shipped with this TFX) on the
same 1,000 digits, converted to the example's input (784 floats and a class
per tf.Example), under LocalDagRunner: its wall time against ours.

Ratios are this tree's over the baseline's (medians of `--repeat`). Writes
bench/results/first_run.json.
"""
import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench.common import (machine_info, print_table, read_summary,
                          run_sampled, write_results)
from settings.config import DEFAULT_DATA, REPO_ROOT

TFX_EXAMPLE_STEPS = 5000  # the example's own TrainArgs


@contextlib.contextmanager
def worktree(revision: str):
    """A temporary checkout of `revision`, removed afterwards."""
    folder = tempfile.mkdtemp(prefix="imagepipe-bench-baseline-")
    subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", "-f", folder,
                    revision], check=True, capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", folder],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def one_run(tree: str, data: str, extra=()) -> dict:
    """A cold default `imagepipe run` of the code in `tree`: wall, pipeline, components."""
    output = tempfile.mkdtemp(prefix="imagepipe-bench-first-run-")
    env = dict(os.environ, PYTHONPATH=tree)  # the tree's code, this environment's packages
    try:
        # `python -m`, not the console script: the script names this tree's entry point,
        # which an older tree may not have; each tree's own __main__ runs as its command.
        command = [sys.executable, "-m", "cli.main", "run", "--data", data, "--output",
                   output, *map(str, extra)]
        run = run_sampled(command, env=env, cwd=tree)
        summary = read_summary(output)
        return {"wall_s": round(run["wall_s"], 2), "timings_s": summary["timings_s"],
                "accuracy": summary["eval"]["accuracy"],
                "epochs_run": (summary.get("training") or {}).get("epochs_run")}
    finally:
        shutil.rmtree(output, ignore_errors=True)


def rows(current: list, baseline: list) -> list:
    """One row per component, the pipeline total and the wall: medians and current/baseline."""
    def median(runs, get):
        values = [get(r) for r in runs if get(r) is not None]
        return statistics.median(values) if values else None

    nodes = list(dict.fromkeys([*baseline[0]["timings_s"], *current[0]["timings_s"]]))
    table = []
    for node in nodes + ["wall"]:
        get = ((lambda r: r["wall_s"]) if node == "wall" else
               (lambda r, n=node: r["timings_s"].get(n)))
        now, then = median(current, get), median(baseline, get)
        table.append({"step": "pipeline total" if node == "total" else node,
                      "baseline_s": then if then is not None else "-",
                      "current_s": now if now is not None else "-",
                      "current/baseline": (now / then if now is not None and then else "-")})
    return table


def tfx_example_data(data: str, folder: str) -> str:
    """The digits as TFX's MNIST example reads them: TFRecords of 784 floats in [0, 1]
    ('image_floats') and the class ('image_class'), one file."""
    import numpy as np
    import tensorflow as tf
    from PIL import Image
    classes = sorted(os.listdir(data))
    os.makedirs(folder, exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(folder, "digits.tfrecord")) as writer:
        for label, name in enumerate(classes):
            for file in sorted(os.listdir(os.path.join(data, name))):
                pixels = np.asarray(Image.open(os.path.join(data, name, file)).convert("L"),
                                    np.float32).reshape(-1) / 255.0
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "image_floats": tf.train.Feature(float_list=tf.train.FloatList(
                        value=pixels)),
                    "image_class": tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[label]))})).SerializeToString())
    return folder


_TFX_EXAMPLE = """
import os, sys
from tfx.examples.mnist import mnist_pipeline_native_keras as example
from tfx.orchestration.local.local_dag_runner import LocalDagRunner
root, data = sys.argv[1], sys.argv[2]
module = os.path.join(os.path.dirname(example.__file__), "mnist_utils_native_keras.py")
LocalDagRunner().run(example._create_pipeline(
    pipeline_name="mnist_native_keras", pipeline_root=os.path.join(root, "pipeline"),
    data_root=data, module_file=module, serving_model_dir=os.path.join(root, "serving"),
    metadata_path=os.path.join(root, "metadata.db"),
    beam_pipeline_args=example._beam_pipeline_args))
"""


def tfx_example_run(data_root: str) -> float:
    """Wall seconds of TFX's MNIST example on `data_root`, cold, in a fresh process."""
    root = tempfile.mkdtemp(prefix="imagepipe-bench-tfx-mnist-")
    # TFX packages the example's module file in temporary folders it never removes
    # (about a dozen a run, one a copy of the example's folder): under `root`, they go too.
    scratch = os.path.join(root, "tmp")
    os.makedirs(scratch)
    try:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _TFX_EXAMPLE, root, data_root],
                              capture_output=True, text=True,
                              env=dict(os.environ, TF_USE_LEGACY_KERAS="1", TMPDIR=scratch))
        wall = time.perf_counter() - started
        if done.returncode:
            raise RuntimeError(f"TFX's MNIST example failed:\n{done.stderr[-3000:]}")
        return round(wall, 2)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--baseline", default="HEAD~1", help="a git revision (default HEAD~1)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--tfx-example", action="store_true",
                        help="also run TFX's own MNIST example on the same digits")
    parser.add_argument("--run-args", default="", help="extra `imagepipe run` flags for both "
                        "trees (tests use it)")
    args = parser.parse_args(argv)
    extra = args.run_args.split()
    current, baseline, tfx = [], [], []
    with contextlib.ExitStack() as stack:
        base_tree = stack.enter_context(worktree(args.baseline))
        example_data = None
        if args.tfx_example:
            example_data = tfx_example_data(args.data, stack.enter_context(
                tempfile.TemporaryDirectory(prefix="imagepipe-bench-tfx-data-")))
        for _ in range(args.repeat):
            baseline.append(one_run(base_tree, args.data, extra))
            current.append(one_run(str(REPO_ROOT), args.data, extra))
            if example_data:
                tfx.append(tfx_example_run(example_data))
    table = rows(current, baseline)
    print_table(table, ["step", "baseline_s", "current_s", "current/baseline"])
    print("accuracy: baseline " + ", ".join(f"{r['accuracy']:.4f}" for r in baseline)
          + "; current " + ", ".join(f"{r['accuracy']:.4f}" for r in current))
    result = {"machine": machine_info(), "data": os.path.abspath(args.data),
              "baseline": args.baseline, "repeat": args.repeat, "run_args": args.run_args,
              "rows": table, "runs": {"baseline": baseline, "current": current}}
    if tfx:
        ours = statistics.median(r["wall_s"] for r in current)
        result["tfx_example"] = {"wall_s": tfx, "train_steps": TFX_EXAMPLE_STEPS,
                                 "ours_over_tfx": round(ours / statistics.median(tfx), 3)}
        print(f"TFX's MNIST example: {', '.join(f'{w:.1f}' for w in tfx)} s wall; ours "
              f"{ours:.1f} s: {result['tfx_example']['ours_over_tfx']:.2f}x")
    return write_results("first_run", result)


if __name__ == "__main__":
    main()
