"""Listing a manifest (readers/manifests/import_files.py and csv_manifest.py): rows to a
Listing.

    bash scripts/bench.sh ingestion/manifest_listing                 # 100,000 rows, ~30 s
    bash scripts/bench.sh ingestion/manifest_listing --rows 10000    # quick look

Writes `rows` tiny files in 100 class folders (reused when there), a Vertex AI CSV, a
Vertex AI JSON Lines file and a headed CSV naming them all beside the files, then times
`list_dataset` on each (every row parsed, normalized, checked against the allowed
root with symlinks resolved, checked for duplicates, and stat'ed), --repeat times; the
table shows the median. Results: docs/results/2026-11-29-manifests.md.
"""
import argparse
import json
import os
import statistics
import tempfile
import time

from bench.common import machine_info, print_table, write_results

CLASSES = 100


def make_files(root: str, rows: int) -> list:
    """(relpath, label, ML_USE) of `rows` files under `root`, written once."""
    found = []
    for i in range(rows):
        label = f"class_{i % CLASSES:03d}"
        use = "training" if i % 10 else "validation"
        found.append((f"{label}/{i:07d}.png", label, use))
    marker = os.path.join(root, f".complete-{rows}")
    if not os.path.exists(marker):
        for label in {label for _, label, _ in found}:
            os.makedirs(os.path.join(root, label), exist_ok=True)
        for relpath, _, _ in found:
            with open(os.path.join(root, relpath), "wb") as f:
                f.write(b"\x89PNG")
        open(marker, "w").close()
    return found


def write_manifests(root: str, found: list) -> dict:
    """{format: path} of the three manifest kinds naming `found`."""
    paths = {"vertex-csv": os.path.join(root, "import.csv"),
             "vertex-jsonl": os.path.join(root, "import.jsonl"),
             "csv": os.path.join(root, "train.csv")}
    with open(paths["vertex-csv"], "w") as f:
        f.writelines(f"{use},{relpath},{label}\n" for relpath, label, use in found)
    with open(paths["vertex-jsonl"], "w") as f:
        f.writelines(json.dumps({
            "imageGcsUri": relpath, "classificationAnnotation": {"displayName": label},
            "dataItemResourceLabels": {"aiplatform.googleapis.com/ml_use": use}}) + "\n"
            for relpath, label, use in found)
    with open(paths["csv"], "w") as f:
        f.write("filename,label,split\n")
        f.writelines(f"{relpath},{label},{use}\n" for relpath, label, use in found)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", default=os.path.join(tempfile.gettempdir(),
                                                        "imagepipe-bench-manifests"))
    args = parser.parse_args()
    from components.image_example_gen.readers.formats import list_dataset
    from settings.config import PipelineConfig
    options = PipelineConfig.from_values().ingest_options()
    paths = write_manifests(args.root, make_files(args.root, args.rows))
    rows, results = [], {}
    for fmt, path in paths.items():
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            listing = list_dataset(path, options)
            times.append(time.perf_counter() - started)
        assert len(listing.files) == args.rows and not listing.skipped
        results[fmt] = {"seconds": times, "median": statistics.median(times)}
        rows.append({"format": fmt, "rows": f"{args.rows:,}",
                     "median_s": statistics.median(times),
                     "runs_s": " ".join(f"{t:.2f}" for t in times)})
    print_table(rows, ["format", "rows", "median_s", "runs_s"])
    write_results("manifest_listing", {"machine": machine_info(), "rows": args.rows,
                                            "results": results})


if __name__ == "__main__":
    main()
