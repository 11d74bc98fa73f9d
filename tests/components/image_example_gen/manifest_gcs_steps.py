"""A Vertex AI CSV and its digits in a bucket, ingested, for test_manifest_ingest.py.

    python -m tests.components.image_example_gen.manifest_gcs_steps RESULTS.json MANIFEST
    # inside scripts/with_gcs.sh, from the repository root

Uploads MANIFEST to gs://imagepipe-test/manifest/ and the bundled digits it names to
images/ beside it (not the missing one), runs the real executor (no driver) with the
manifest as input_base and a bucket output, and writes the ingest report and the
file names written to RESULTS.json.
"""
import sys

from tests.support.examples import example_gen_properties, read_split, run_example_gen
from tests.support.gcs_harness import run_and_record
from tests.support.paths import MNIST_PNG

BUCKET = "gs://imagepipe-test/manifest"


def steps(manifest: str) -> dict:
    from core.contract import FILENAME_KEY, read_ingest_report
    from core.storage import files
    text = open(manifest, encoding="utf-8").read()
    files.write_text(f"{BUCKET}/manifest.csv", text)
    for line in text.splitlines():
        image = line.split(",")[1]
        source = MNIST_PNG / image[len("images/"):]
        if source.exists():
            files.write_bytes(f"{BUCKET}/{image}", source.read_bytes())
    examples = run_example_gen(f"{BUCKET}/out", example_gen_properties(
        f"{BUCKET}/manifest.csv"))
    names = [e.features.feature[FILENAME_KEY].bytes_list.value[0].decode()
             for split in ("train", "eval") for e in read_split(examples.uri, split)]
    return {"report": read_ingest_report(examples.uri), "names": names}


if __name__ == "__main__":
    run_and_record(steps, sys.argv[1], *sys.argv[2:])
