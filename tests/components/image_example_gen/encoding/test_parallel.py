"""The encoding pool: when it is used, and that it writes what in-process encoding writes."""
import json

import pytest

from components.image_example_gen.encoding import parallel
from components.image_example_gen.encoding.encode import encode_files, local_file_job
from components.image_example_gen.encoding.encode_worker import answer, shard_request
from components.image_example_gen.encoding.shard_writer import write_shard


@pytest.mark.parametrize("args, expected", [
    ([], "cores"),
    (["--direct_running_mode=in_memory", "--direct_num_workers=1"], "cores"),
    (["--direct_running_mode=multi_processing", "--direct_num_workers=2"], 1),
    (["--direct_running_mode=multi_threading"], 1),
    (["--runner=DataflowRunner", "--project=p"], 1),
])
def test_pool_only_where_beam_runs_everything_in_one_process(args, expected, monkeypatch):
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 4)
    assert parallel.local_processes(args) == (4 if expected == "cores" else expected)


def _files(tmp_path, make_image):
    """[relpath, label, split or None] rows under tmp_path/in, two of them bad."""
    for i in range(5):
        make_image(tmp_path / "in" / "c" / f"{i}.png", seed=i)
    (tmp_path / "in" / "c" / "bad.png").write_bytes(b"not a png")
    names = [f"{i}.png" for i in range(5)] + ["bad.png", "missing.png"]
    return [[f"c/{n}", 0, "eval" if i == 0 else None] for i, n in enumerate(names)]


def _context(tmp_path, out):
    return {"root": str(tmp_path / "in"), "classes": ["c"], "buckets": [50, 100],
            "max_pixels": 10**8, "split_dirs": {s: str(out / s) for s in ("train", "eval")}}


def test_pool_writes_the_same_bytes_as_in_process_encoding(tmp_path, make_image):
    files = _files(tmp_path, make_image)
    pool = parallel.EncoderPool(2)
    try:
        facts, skipped, health = pool.submit(_context(tmp_path, tmp_path / "pool"), "d.gz",
                                             files).result()
    finally:
        pool.close()
    inline = _context(tmp_path, tmp_path / "inline")
    jobs = [local_file_job(inline["root"], *row, ["c"], [50, 100]) for row in files]
    inline_health = []
    assert (facts, skipped) == write_shard(encode_files(jobs, 10**8), inline["split_dirs"],
                                           "d.gz", inline_health)
    assert health == inline_health and len(health) == 5
    assert sum(facts.values()) == 5
    assert [r["path"] for r in skipped] == ["c/bad.png", "c/missing.png"]
    for split in ("train", "eval"):
        assert (tmp_path / "pool" / split / "d.gz").read_bytes() == \
            (tmp_path / "inline" / split / "d.gz").read_bytes()


def test_a_shard_that_cannot_be_written_fails_naming_it(tmp_path, make_image):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    files, context = _files(tmp_path, make_image), _context(tmp_path, tmp_path / "blocker")
    assert "d.gz" in json.loads(answer(shard_request(context, "d.gz", files)))["error"]
    pool = parallel.EncoderPool(1)
    try:
        with pytest.raises(OSError, match="d.gz"):
            pool.submit(context, "d.gz", files).result()
    finally:
        pool.close()
