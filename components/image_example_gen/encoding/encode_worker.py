"""An image-encoding worker process: encodes and writes whole shards of local files.

    python -m components.image_example_gen.encoding.encode_worker

It reads one JSON request per line on stdin and answers each with one JSON
line on stdout (JSON escapes newlines, so a line is always one message):

    request: {"root": dataset root, "classes": [names], "buckets": split buckets,
              "max_pixels": int, "split_dirs": {split: dir}, "name": file name,
              "hashes": bool, "groups": {relpath: group} (the shard's),
              "files": [[relpath, label, split or null], ...]}
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
import json
import os
import sys
from typing import List

from components.image_example_gen.encoding.encode import (encode_files, hash_files,
                                                          local_file_job)
from components.image_example_gen.encoding.shard_writer import write_shard


def shard_request(context: dict, name: str, files: List[list]) -> str:
    """The request line for one shard of local image files.

    `context` holds what every shard shares: root, classes, buckets,
    max_pixels, split_dirs. `files` are [relpath, label, split or None].
    """
    return json.dumps({**context, "name": name, "files": files}) + "\n"


def answer(line: str) -> str:
    """Encodes and writes the shard a request line describes; returns the reply line."""
    request = json.loads(line)
    groups = request.get("groups") or {}
    jobs = (local_file_job(request["root"], relpath, label, split, request["classes"],
                           request["buckets"])._replace(group=groups.get(relpath))
            for relpath, label, split in request["files"])
    if request.get("hash_only"):
        rows = list(hash_files(jobs, request["max_pixels"]))
        return json.dumps({"rows": [r for r in rows if isinstance(r, list)],
                           "skipped": [r for r in rows if isinstance(r, dict)]}) + "\n"
    health = []
    try:
        facts, skipped = write_shard(
            encode_files(jobs, request["max_pixels"], request.get("hashes", True)),
            request["split_dirs"], request["name"], health)
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
