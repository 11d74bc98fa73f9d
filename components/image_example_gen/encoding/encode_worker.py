"""An image-encoding worker process: encodes and writes whole shards of local files.

    python -m components.image_example_gen.encoding.encode_worker

It reads one JSON request per line on stdin and answers each with one JSON
line on stdout (JSON escapes newlines, so a line is always one message):

    request: {"root": dataset root, "classes": [names], "buckets": split buckets,
              "max_pixels": int, "split_dirs": {split: dir}, "name": file name,
              "hashes": bool, "groups": {relpath: group} (the shard's),
              "files": [[relpath, label, split or null], ...]}
              or with "units": [[unit type, *fields], ...] (row units: Hugging Face
              rows, TFDS shards, TFRecord files, as in the shards manifest) instead of
              "files", and "options" (IngestOptions' fields), "groups" all of them;
              or with "hash_only": true (`imagepipe inspect`): no split_dirs, name,
              groups; nothing is written.
    reply:   {"facts": [[*fact, count], ...] (fact: encode.Fact's fields),
              "skipped": [{"path", "reason"}, ...],
              "health": [[relpath, content hash, perceptual hash, *fact], ...]}
             or {"error": message} if the shard could not be written;
             hash_only: {"rows": encode.hash_files' rows, "skipped": [...]}.

JSON, not pickle: file and class names come from the dataset, and nothing
data-derived is ever unpickled.
"""
import importlib
import json
import os
import sys
from typing import Iterator, List

from components.image_example_gen.encoding.encode import (encode_files, hash_files,
                                                          local_file_job)
from components.image_example_gen.encoding.interleave import round_robin
from components.image_example_gen.encoding.shard_writer import write_shard

# Row units' modules, imported on a worker's first shard of them: a Hugging Face shard
# needs pyarrow, not TensorFlow (3 s to import); TFDS and TFRecord shards need TensorFlow.
_UNIT_MODULES = {
    "HfRows": "components.image_example_gen.readers.hub_datasets.hf_rows",
    "TfdsShard": "components.image_example_gen.readers.hub_datasets.tfds_folders",
    "RecordFile": "components.image_example_gen.readers.tfrecords"}


def shard_request(context: dict, name: str, files: List[list]) -> str:
    """The request line for one shard of local image files.

    `context` holds what every shard shares: root, classes, buckets,
    max_pixels, split_dirs. `files` are [relpath, label, split or None].
    """
    return json.dumps({**context, "name": name, "files": files}) + "\n"


def unit_examples(request: dict) -> Iterator:
    """The encoded examples of a request's row units, one from each unit in turn, read as
    ingestion reads them in process (readers/units.py read_unit)."""
    from components.image_example_gen.data_health import hashing
    from components.image_example_gen.options import IngestOptions, split_index
    from core.contract import SPLITS
    hashing.ENABLED = request.get("hashes", True)
    options = IngestOptions(**request["options"])
    split_of = lambda relpath: SPLITS[split_index(relpath, options.buckets)]  # noqa: E731
    streams = []
    for kind, *fields in request["units"]:
        unit = getattr(importlib.import_module(_UNIT_MODULES[kind]), kind)(*fields)
        if kind == "HfRows":
            read = importlib.import_module(_UNIT_MODULES[kind]).read_hf_unit
        else:
            read = importlib.import_module("components.image_example_gen.readers.units").read_unit
        streams.append(read(unit, request["root"], request["classes"], options, split_of,
                            request.get("groups") or {}))
    return round_robin(streams)


def _file_jobs(request: dict) -> Iterator:
    groups = request.get("groups") or {}
    return (local_file_job(request["root"], relpath, label, split, request["classes"],
                           request["buckets"])._replace(group=groups.get(relpath))
            for relpath, label, split in request["files"])


def _examples(request: dict) -> Iterator:
    if "units" in request:
        return unit_examples(request)
    return encode_files(_file_jobs(request), request["max_pixels"], request.get("hashes", True))


def answer(line: str) -> str:
    """Encodes and writes the shard a request line describes; returns the reply line."""
    request = json.loads(line)
    if request.get("hash_only"):
        rows = list(hash_files(_file_jobs(request), request["max_pixels"]))
        return json.dumps({"rows": [r for r in rows if isinstance(r, list)],
                           "skipped": [r for r in rows if isinstance(r, dict)]}) + "\n"
    health = []
    try:
        facts, skipped = write_shard(_examples(request), request["split_dirs"],
                                     request["name"], health)
    except OSError as e:  # the output cannot be written: the shard fails, loudly
        return json.dumps({"error": f"{request['name']}: {e}"}) + "\n"
    return json.dumps({"facts": [[*fact, count] for fact, count in facts.items()],
                       "skipped": skipped, "health": health}) + "\n"


def main() -> int:
    """Answers requests until stdin closes."""
    # Replies get their own copy of fd 1; anything a library prints goes to stderr.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for line in sys.stdin:
        replies.write(answer(line))
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
