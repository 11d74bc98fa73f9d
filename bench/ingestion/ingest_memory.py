"""Peak memory of `imagepipe ingest` on large JPEGs: bounded, whatever the dataset size.

    bash scripts/bench.sh ingestion/ingest_memory  # 0.5 then 2 GB (run time: docs/performance.md)
    bash scripts/bench.sh ingestion/ingest_memory --gb 0.1 0.4  # quicker look

Generates class folders of 3000x2000 noise JPEGs (noise barely compresses:
several MB each; disk needed: docs/performance.md) in --work, ingests each
dataset in a fresh `imagepipe ingest` process, and samples the resident
memory of that process and its encoder workers together every 0.1 s. Ratios
are against the smallest dataset, in the same run. Writes
bench/results/memory.json.
"""
import argparse
import io
import os
import shutil

import numpy as np
from PIL import Image

from bench.common import imagepipe_command, machine_info, print_table, run_sampled, write_results

SIZE = (3000, 2000)


def make_dataset(root: str, gigabytes: float, classes: int = 4) -> int:
    """Writes JPEGs until their total reaches `gigabytes`; returns how many."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, (SIZE[1], SIZE[0], 3), dtype=np.uint8)
    total, count = 0, 0
    while total < gigabytes * 1e9:
        pixels = base.copy()
        pixels[:32, :32] = count % 256  # every file differs
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, "JPEG", quality=90)
        folder = os.path.join(root, f"class{count % classes}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{count:05d}.jpg"), "wb") as f:
            f.write(buffer.getvalue())
        total += buffer.tell()
        count += 1
    return count


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, nargs="+", default=[0.5, 2.0])
    parser.add_argument("--work", default="/tmp/imagepipe-bench-memory")
    args = parser.parse_args(argv)
    rows = []
    for gigabytes in args.gb:
        shutil.rmtree(args.work, ignore_errors=True)
        data = os.path.join(args.work, "data")
        images = make_dataset(data, gigabytes)
        run = run_sampled(imagepipe_command("ingest", "--data", data,
                                            "--output", os.path.join(args.work, "out")))
        peak, seconds = max(rss for _, rss in run["samples"]) / 1e6, run["wall_s"]
        rows.append({"dataset_gb": gigabytes, "images": images, "peak_rss_mb": peak,
                     "seconds": seconds})
    shutil.rmtree(args.work, ignore_errors=True)
    for row in rows:
        row["peak_ratio"] = row["peak_rss_mb"] / rows[0]["peak_rss_mb"]
        row["size_ratio"] = row["dataset_gb"] / rows[0]["dataset_gb"]
    print_table(rows, ["dataset_gb", "images", "peak_rss_mb", "peak_ratio", "size_ratio",
                       "seconds"])
    return write_results("memory", {"machine": machine_info(), "jpeg_size": SIZE,
                                    "rows": rows})


if __name__ == "__main__":
    main()
