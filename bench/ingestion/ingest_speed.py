"""Ingestion throughput and peak memory: `imagepipe ingest` against a plain loop.

    bash scripts/bench.sh ingestion/ingest_speed                          # 5,000 and 20,000 images
    bash scripts/bench.sh ingestion/ingest_speed --sizes 2000 --repeat 1  # quick look

Run time on 2 cores: docs/performance.md (the benchmarks table).

The baseline, run in the same invocation, is a single-process loop that reads
each file, decodes it once, builds the same tf.Example with tf.train.Example
and writes it with tf.io.TFRecordWriter (gzipped, like ours). Each variant
runs in its own process, timed after imports, so its peak RSS (the largest
of it and its worker processes) is its own; each runs --repeat times,
interleaved, and the table shows the median. Prints a table and writes
bench/results/ingest.json.
"""
import argparse
import os
import statistics
import subprocess
import time

import numpy as np
from PIL import Image

from bench.common import machine_info, print_table, run_result_in_process, write_results

VARIANTS = {
    "baseline": None,
    # The default (settings/config.py): in_memory, with a pool of encoding processes.
    "imagepipe": "--direct_running_mode=in_memory --direct_num_workers=1",
    # Beam's own parallel modes, for comparison (no encoding pool: 1 process each).
    "beam-2-threads": "--direct_running_mode=multi_threading --direct_num_workers=2",
    "beam-2-processes": "--direct_running_mode=multi_processing --direct_num_workers=2",
}


def make_dataset(root: str, count: int, classes: int = 10, side: int = 64) -> str:
    """`count` RGB JPEGs of `side` pixels in `classes` folders; reused if already there."""
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return root
    rng = np.random.default_rng(count)
    for i in range(count):
        folder = os.path.join(root, f"class_{i % classes:02d}")
        os.makedirs(folder, exist_ok=True)
        coarse = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)  # smooth, photo-like size
        image = Image.fromarray(coarse).resize((side, side), Image.BILINEAR)
        image.save(os.path.join(folder, f"{i:06d}.jpg"), quality=90)
    open(marker, "w").close()
    return root


def _example(data: bytes, relpath: str, label: int, class_name: str):
    """The same tf.train.Example as ours, built the plain way."""
    import tensorflow as tf
    from components.image_example_gen.encoding import encode
    from settings.config import DEFAULT_MAX_PIXELS
    image = encode.decode_fully(data, DEFAULT_MAX_PIXELS)
    encoded, fmt = encode.stored_encoding(image, data)
    width, height = image.size
    values = {encode.IMAGE_KEY: encoded, encode.FORMAT_KEY: fmt.encode(),
              encode.HEIGHT_KEY: height, encode.WIDTH_KEY: width,
              encode.CHANNELS_KEY: encode.channels_of(image), encode.LABEL_KEY: label,
              encode.CLASS_TEXT_KEY: class_name.encode(), encode.FILENAME_KEY: relpath.encode()}
    feature = {k: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))
               if isinstance(v, bytes) else tf.train.Feature(int64_list=tf.train.Int64List(
                   value=[v])) for k, v in values.items()}
    return tf.train.Example(features=tf.train.Features(feature=feature))


def _baseline(data: str, out: str) -> int:
    import tensorflow as tf
    from components.image_example_gen.readers.folder_tree import list_class_folders
    from components.image_example_gen.ingest import split_index
    from core.contract import SPLITS
    listing = list_class_folders(data)
    options = tf.io.TFRecordOptions(compression_type="GZIP")
    writers = {s: tf.io.TFRecordWriter(os.path.join(out, f"{s}.tfrecord.gz"), options)
               for s in SPLITS}
    for item in listing.files:
        with open(os.path.join(data, item.relpath), "rb") as f:
            example = _example(f.read(), item.relpath, item.label, listing.classes[item.label])
        writers[SPLITS[split_index(item.relpath, [80, 100])]].write(example.SerializeToString())
    for writer in writers.values():
        writer.close()
    return len(listing.files)


def _ours(data: str, out: str, beam_args: str) -> int:
    from settings.config import PipelineConfig
    from pipeline.local.ingest_command import run_ingest
    report = run_ingest(PipelineConfig.from_values(data=data, output=out, beam_args=beam_args))
    return sum(report["splits"].values())


def run_variant(name: str, data: str, out: str) -> dict:
    """Runs one variant in this process; returns seconds and images (imports excluded)."""
    os.makedirs(out, exist_ok=True)
    # Every import happens before the clock starts, for both sides.
    import components.image_example_gen.ingest  # noqa: F401  (Beam, TF, PIL)
    import pipeline.local.ingest_command  # noqa: F401
    start = time.perf_counter()
    images = _baseline(data, out) if name == "baseline" else _ours(data, out + "/o",
                                                                   VARIANTS[name])
    return {"seconds": time.perf_counter() - start, "images": images}


def _measure(name: str, data: str, out: str) -> dict:
    """Runs a variant in a fresh process; adds its peak RSS (children included)."""
    code = ("import json, resource, sys; from bench.ingestion.ingest_speed import run_variant; "
            f"r = run_variant({name!r}, {data!r}, {out!r}); "
            "r['peak_rss_mb'] = max(resource.getrusage(w).ru_maxrss for w in "
            "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024; "
            "print('RESULT', json.dumps(r))")
    return run_result_in_process(code, name)


def _measure_size(count: int, workdir: str, repeat: int) -> list:
    """Every variant `repeat` times, interleaved (so drift hits all alike); median seconds."""
    data = make_dataset(os.path.join(workdir, f"data_{count}"), count)
    runs = {name: [] for name in VARIANTS}
    for _ in range(repeat):
        for name in VARIANTS:
            out = os.path.join(workdir, f"out_{count}_{name}")
            subprocess.run(["rm", "-rf", out], check=True)
            runs[name].append(_measure(name, data, out))
    rows = []
    for name, results in runs.items():
        seconds = sorted(r["seconds"] for r in results)
        rows.append({"variant": name, "images": count, "seconds": statistics.median(seconds),
                     "seconds_all": seconds,
                     "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
                     "images_per_s": count / statistics.median(seconds)})
    return rows


def main(argv=None) -> dict:
    """Runs every variant at every size; prints the table, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant (median)")
    parser.add_argument("--workdir", default="/tmp/imagepipe-bench-ingest")
    args = parser.parse_args(argv)
    rows = [row for count in args.sizes
            for row in _measure_size(count, args.workdir, args.repeat)]
    base = {r["images"]: r for r in rows if r["variant"] == "baseline"}
    for row in rows:
        row["speedup_vs_baseline"] = base[row["images"]]["seconds"] / row["seconds"]
    print_table(rows, ["variant", "images", "seconds", "images_per_s", "speedup_vs_baseline",
                       "peak_rss_mb"])
    return write_results("ingest", {"machine": machine_info(), "repeat": args.repeat,
                                    "rows": rows})


if __name__ == "__main__":
    main()
