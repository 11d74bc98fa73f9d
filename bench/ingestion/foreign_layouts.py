"""Listing and ingesting Fashion-MNIST as a Hugging Face Parquet dataset, and a 100,000-row
Vertex AI import file, against the same PNG images as class folders: time and peak memory.

    bash scripts/bench.sh ingestion/foreign_layouts --fashion-mnist DIR  # ~4 min, 0.8 GB disk
    bash scripts/bench.sh ingestion/foreign_layouts --fashion-mnist DIR --count 1400 \
        --repeat 1 --work /tmp/foreign --keep  # quick look; data kept for the next run

DIR holds Fashion-MNIST's IDX files (train-images-idx3-ubyte.gz, t10k-*). In --work, made
once and kept with --keep (a marker per --count), the bench writes four datasets:

- folders A: the --count images (60,000 train, 10,000 test) as PNGs, train/<class>/ and
  test/<class>/ (pre-split: train, and test as eval);
- parquet: the same PNG bytes in the Hub's layout, data/<split>-0000i-of-0000n.parquet,
  shards of 15,000 rows, row groups of 100 (as `datasets` writes images), the class names
  in the schema's `huggingface` metadata: compared with folders A;
- import_csv: a Vertex AI CSV of 10/7 x --count rows (100,000), ML_USE,path,label, naming
  the images plus a mirrored copy, shifted by one pixel, of the first 3/7 (30,000), laid
  out as images/<split>/<class>/, the split folder (train, validation, test) after the
  row's ML_USE;
- folders B: that images/ tree itself, compared with import_csv. In both, validation is
  eval and test is not ingested.

Each layout is listed (`list_dataset`, timed after imports) in a fresh process, then
ingested by a fresh `imagepipe ingest` process (wall time from start to exit, imports
included), sampling the resident memory of it and its encoder workers together every
0.1 s; --repeat times, interleaved, median reported. Ratios are layout / its folders in
the same run: above 1 is slower or larger. Checks that each layout ingests the same
number of images per split and class as its folders. Writes
bench/results/foreign_layouts.json. Results: docs/results/2026-11-29-manifests.md.
"""
import argparse
import gzip
import io
import json
import os
import shutil
import statistics
import tempfile

import numpy as np
from PIL import Image

from bench.common import (imagepipe_command, machine_info, print_table,
                          run_result_in_process, run_sampled, write_results)

# Fashion-MNIST's classes in label order, as folder names (the Hub's have '/' and spaces).
CLASSES = ("tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt",
           "sneaker", "bag", "ankle_boot")
SHARD_ROWS = 15_000
ROW_GROUP = 100
# (layout, the folders it is compared with); a baseline is compared with itself.
LAYOUTS = (("folders_a", "folders_a"), ("parquet", "folders_a"),
           ("folders_b", "folders_b"), ("import_csv", "folders_b"))


def read_fashion_mnist(folder: str, count: int) -> dict:
    """{"train"/"test": (uint8 images N x 28 x 28, labels)}: 6/7 of `count` from train."""
    from components.image_example_gen.readers.arrays import parse_idx
    sizes = {"train": count - count // 7, "test": count // 7}
    found = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        arrays = []
        for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
            name = f"{prefix}-{kind}.gz"
            with gzip.open(os.path.join(folder, name)) as f:
                arrays.append(parse_idx(f.read(), name)[:sizes[split]])
        found[split] = tuple(arrays)
    return found


def png(pixels: np.ndarray) -> bytes:
    """The PNG bytes of a grayscale image."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def write_file(path: str, data: bytes) -> None:
    """Writes `data` to `path`, making its folder."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_hub_parquet(root: str, splits: dict) -> None:
    """{split: [(PNG bytes, label id)]} as data/<split>-0000i-of-0000n.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    features = {"image": {"decode": True, "id": None, "_type": "Image"},
                "label": {"names": list(CLASSES), "_type": "ClassLabel"}}
    schema = pa.schema([("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                        ("label", pa.int64())],
                       metadata={"huggingface": json.dumps({"info": {"features": features}})})
    for split, rows in splits.items():
        shards = -(-len(rows) // SHARD_ROWS)
        for i in range(shards):
            part = rows[i * SHARD_ROWS:(i + 1) * SHARD_ROWS]
            table = pa.table({"image": [{"bytes": data, "path": None} for data, _ in part],
                              "label": [label for _, label in part]}, schema=schema)
            path = os.path.join(root, "data", f"{split}-{i:05d}-of-{shards:05d}.parquet")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            pq.write_table(table, path, row_group_size=ROW_GROUP)


def _originals(fashion: dict) -> list:
    """(name, pixels, label id, split) of every image read."""
    return [(f"{split}_{i:05d}", images[i], int(labels[i]), split)
            for split, (images, labels) in fashion.items() for i in range(len(labels))]


def write_folders_and_parquet(data: str, originals: list) -> None:
    """Folders A and the Parquet dataset, of the same PNG bytes."""
    hub = {"train": [], "test": []}
    for name, pixels, label, split in originals:
        encoded = png(pixels)
        write_file(os.path.join(data, "folders_a", split, CLASSES[label], name + ".png"),
                   encoded)
        hub[split].append((encoded, label))
    write_hub_parquet(os.path.join(data, "parquet"), hub)


def write_import(data: str, originals: list) -> None:
    """import/import.csv and the images it names (folders B: import/images/).

    3/7 more images than the originals: the first ones mirrored and shifted by a pixel,
    so that none equals its source. Every tenth row is validation, the next test, the
    rest training; each image sits in the split folder of its row.
    """
    mirrors = [(name + "_mirror", np.roll(pixels[:, ::-1], 1, axis=1), label, split)
               for name, pixels, label, split in originals[:3 * len(originals) // 7]]
    uses = ("validation", "test", *["training"] * 8)
    folders = {"training": "train", "validation": "validation", "test": "test"}
    lines = []
    for i, (name, pixels, label, _) in enumerate(originals + mirrors):
        use = uses[i % len(uses)]
        relpath = f"images/{folders[use]}/{CLASSES[label]}/{name}.png"
        write_file(os.path.join(data, "import", relpath), png(pixels))
        lines.append(f"{use},{relpath},{CLASSES[label]}\n")
    with open(os.path.join(data, "import", "import.csv"), "w") as f:
        f.writelines(lines)


def make_datasets(data: str, fashion_mnist: str, count: int) -> dict:
    """{layout: the path to give --data}; the files are written once per `count`."""
    marker = os.path.join(data, f".complete-{count}")
    if not os.path.exists(marker):
        shutil.rmtree(data, ignore_errors=True)
        originals = _originals(read_fashion_mnist(fashion_mnist, count))
        write_folders_and_parquet(data, originals)
        write_import(data, originals)
        open(marker, "w").close()
    return {"folders_a": os.path.join(data, "folders_a"),
            "parquet": os.path.join(data, "parquet"),
            "folders_b": os.path.join(data, "import", "images"),
            "import_csv": os.path.join(data, "import", "import.csv")}


def disk_bytes(path: str) -> int:
    """Disk space the files under `path` take (blocks: a 300-byte PNG takes 4 KiB)."""
    return sum(os.stat(os.path.join(folder, name)).st_blocks * 512
               for folder, _, names in os.walk(path) for name in names)


def time_listing(path: str) -> dict:
    """`list_dataset` of `path` in a fresh process, timed after imports."""
    code = ("import json, time\n"
            "from components.image_example_gen.readers.formats import list_dataset\n"
            "from settings.config import PipelineConfig\n"
            "options = PipelineConfig.from_values().ingest_options()\n"
            "start = time.perf_counter()\n"
            f"listing = list_dataset({path!r}, options)\n"
            "print('RESULT', json.dumps({'seconds': time.perf_counter() - start,\n"
            "      'units': len(listing.files), 'format': listing.format}))\n")
    return run_result_in_process(code, f"listing {path}")


def time_ingest(path: str, output: str) -> dict:
    """`imagepipe ingest` of `path` in a fresh process: seconds, peak RSS, what it wrote."""
    from core.contract import INGEST_REPORT_FILE
    shutil.rmtree(output, ignore_errors=True)
    run = run_sampled(imagepipe_command("ingest", "--data", path, "--output", output))
    with open(os.path.join(output, INGEST_REPORT_FILE)) as f:
        report = json.load(f)
    found = {"seconds": run["wall_s"], "peak_rss_mb": max(r for _, r in run["samples"]) / 1e6,
             "output_bytes": disk_bytes(output), "splits": report["splits"],
             "per_class": report["per_class"], "skipped": len(report["skipped"])}
    shutil.rmtree(output)
    return found


def measure(paths: dict, work: str, repeat: int) -> dict:
    """{layout: its listings and ingestions}, --repeat times, interleaved."""
    runs = {name: {"listing": [], "ingest": []} for name in paths}
    for _ in range(repeat):
        for name, path in paths.items():
            runs[name]["listing"].append(time_listing(path))
            runs[name]["ingest"].append(time_ingest(path, os.path.join(work, "out", name)))
    return runs


def summarize(inputs: dict, runs: dict) -> list:
    """A row per layout: medians, ratios to its folders, and whether the counts match."""
    rows = {}
    for name, baseline in LAYOUTS:
        listed, ingested = runs[name]["listing"], runs[name]["ingest"]
        rows[name] = {
            "layout": name, "against": baseline, "format": listed[0]["format"],
            "images": sum(ingested[0]["splits"].values()),
            "splits": " ".join(f"{k} {v}" for k, v in ingested[0]["splits"].items()),
            "list_s": statistics.median(r["seconds"] for r in listed),
            "ingest_s": statistics.median(r["seconds"] for r in ingested),
            "peak_mb": statistics.median(r["peak_rss_mb"] for r in ingested),
            "input_mb": inputs[name] / 1e6,
            "output_mb": ingested[0]["output_bytes"] / 1e6}
        base, ours = runs[baseline]["ingest"][0], ingested[0]
        rows[name]["same_counts"] = (base["splits"] == ours["splits"]
                                     and base["per_class"] == ours["per_class"]
                                     and not ours["skipped"])
        for key in ("list_s", "ingest_s", "peak_mb", "output_mb"):
            rows[name][key + "_x"] = rows[name][key] / rows[baseline][key]
    return list(rows.values())


def main(argv=None) -> dict:
    """Makes the datasets, measures each layout, prints the table, writes the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fashion-mnist", required=True,
                        help="folder of Fashion-MNIST's IDX files (*-idx3-ubyte.gz)")
    parser.add_argument("--count", type=int, default=70_000,
                        help="Fashion-MNIST images to use (the import file has 10/7 as many)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", default=None, help="default: a new folder under /tmp")
    parser.add_argument("--keep", action="store_true", help="keep --work (data reused)")
    args = parser.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="imagepipe-bench-foreign-")
    try:
        paths = make_datasets(os.path.join(work, "data"), args.fashion_mnist, args.count)
        # The import file's images are its input too: its folder, with the CSV.
        inputs = {name: disk_bytes(os.path.dirname(path) if name == "import_csv" else path)
                  for name, path in paths.items()}
        runs = measure(paths, work, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    rows = summarize(inputs, runs)
    print_table(rows, ["layout", "against", "images", "splits", "list_s", "list_s_x",
                       "ingest_s", "ingest_s_x", "peak_mb", "peak_mb_x", "input_mb",
                       "output_mb", "output_mb_x", "same_counts"])
    return write_results("foreign_layouts", {
        "machine": machine_info(), "count": args.count, "repeat": args.repeat,
        "rows": rows, "runs": runs})


if __name__ == "__main__":
    main()
