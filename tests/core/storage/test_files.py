"""core/storage/files.py on local paths, and on TF's in-memory ram:// file system,
which goes through the same tf.io.gfile code as gs:// (a real GCS server: tests/e2e/test_gcs.py)."""
import os
import uuid

import pytest

from core.storage import files, remote


@pytest.fixture
def ram_root():
    return f"ram://storage-test-{uuid.uuid4().hex[:8]}"


def test_local_listing_splits_folders_and_files_and_keeps_unreadable_entries(tmp_path):
    (tmp_path / "cats").mkdir()
    (tmp_path / "a.png").write_bytes(b"x")
    os.symlink(tmp_path / "loop", tmp_path / "loop")  # cannot be stat'ed: a file, for ingestion
    assert files.list_dir(str(tmp_path)) == (["cats"], ["a.png", "loop"])
    assert files.listdir(str(tmp_path)) == ["a.png", "cats", "loop"]


def test_remote_listing_tells_folders_from_files(ram_root):
    files.write_bytes(f"{ram_root}/data/cats/1.png", b"png")
    files.write_bytes(f"{ram_root}/data/notes.txt", b"hi")
    assert files.list_dir(f"{ram_root}/data") == (["cats"], ["notes.txt"])
    assert files.isdir(f"{ram_root}/data/cats") and files.isfile(f"{ram_root}/data/notes.txt")
    assert not files.exists(f"{ram_root}/data/dogs")


@pytest.mark.parametrize("remote", [False, True])
def test_reads_whole_and_head_and_writes_whole(tmp_path, ram_root, remote):
    path = f"{ram_root}/f.bin" if remote else str(tmp_path / "sub" / "f.bin")
    files.write_bytes(path, b"0123456789")
    assert files.read_bytes(path) == b"0123456789"
    assert files.read_head(path, 4) == b"0123" and files.read_head(path, 99) == b"0123456789"
    assert files.size(path) == 10
    if not remote:  # (ram:// appends to an existing file; gs:// replaces the object)
        files.write_text(path, "new")
        assert files.read_text(path) == "new"
        assert os.listdir(tmp_path / "sub") == ["f.bin"]  # no temporary file left behind


def test_read_heads_reads_many_and_marks_the_unreadable(tmp_path):
    paths = []
    for i in range(5):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * 100)
        paths.append(str(tmp_path / f"{i}.bin"))
    heads = files.read_heads(paths + [str(tmp_path / "missing")], 8)
    assert heads[:5] == [bytes([i]) * 8 for i in range(5)] and heads[5] is None


def test_walk_files_lists_every_file_with_its_size(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.txt").write_bytes(b"12")
    (tmp_path / "b" / "c.txt").write_bytes(b"345")
    found = files.walk_files(str(tmp_path))
    assert [(os.path.relpath(f.path, tmp_path), f.size) for f in found] == [
        ("a.txt", 2), ("b/c.txt", 3)]
    assert all(f.mtime_ns > 0 for f in found)


def test_rename_remove_and_rmtree_on_both_kinds(tmp_path, ram_root):
    for root in (str(tmp_path), ram_root):
        files.write_bytes(f"{root}/d/x", b"1")
        files.rename(f"{root}/d/x", f"{root}/d/y")
        assert files.listdir(f"{root}/d") == ["y"]
        files.remove(f"{root}/d/y")
        files.remove(f"{root}/d/y")  # a missing file is not an error
        files.write_bytes(f"{root}/d/e/z", b"1")
        files.rmtree(f"{root}/d")
        assert not files.exists(f"{root}/d/e/z")


class Unavailable(Exception):
    pass


Unavailable.__name__ = "UnavailableError"  # as tf.errors names a transient error


def test_transient_errors_are_retried_and_others_raised_at_once(monkeypatch):
    monkeypatch.setattr(remote, "FIRST_DELAY_S", 0.0)
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise Unavailable("503")
        return "ok"
    assert files.retrying(flaky, "flaky") == "ok" and len(calls) == 3
    with pytest.raises(FileNotFoundError):
        files.retrying(lambda: calls.append(1) or open("/no/such/file"), "missing")
    assert len(calls) == 4  # not retried
    with pytest.raises(ConnectionResetError):
        files.retrying(lambda: (_ for _ in ()).throw(ConnectionResetError()), "reset")


def test_paths_and_buckets():
    assert files.absolute("gs://b/x") == "gs://b/x"
    assert files.absolute("~/x") == os.path.join(os.path.expanduser("~"), "x")
    assert files.bucket_of("gs://b/x/y") == "gs://b" and files.bucket_of("/tmp/x") is None
    assert files.is_remote("gs://b") and not files.is_remote("/gs:/b")
    assert files.is_remote("ram://x") and files.scheme("s3://b/k") == "s3"
    # As TensorFlow parses a URI: a scheme only at the start, so these are local paths.
    assert not files.is_remote("/tmp/a://b") and not files.is_remote("1x://b")
    assert files.has_buckets("gs://b/x") and files.has_buckets("s3://b")
    assert not files.has_buckets("ram://b") and not files.has_buckets("/tmp/gs://b")
    assert files.bucket_of("s3://b") == "s3://b"


def test_glob_matches_dot_names_as_tensorflow_does_on_both_kinds(tmp_path, ram_root):
    for root in (str(tmp_path), ram_root):
        for name in ("a/data-1.gz", "a/.data-2.tmp", "b/data-3.gz", "b/x.txt"):
            files.write_bytes(f"{root}/{name}", b"1")
        assert files.glob(f"{root}/*/data-*") == [f"{root}/a/data-1.gz", f"{root}/b/data-3.gz"]
        assert files.glob(f"{root}/a/*") == [f"{root}/a/.data-2.tmp", f"{root}/a/data-1.gz"]
        assert files.glob(f"{root}/b/x.txt") == [f"{root}/b/x.txt"]
        assert files.glob(f"{root}/nope/*") == [] and files.glob(f"{root}/nope") == []


def test_walk_is_os_walk_on_both_kinds_and_can_skip_folders(tmp_path, ram_root):
    for root in (str(tmp_path / "w"), ram_root):
        for name in ("top.txt", "cats/1.png", ".hidden/2.png", "cats/deep/3.png"):
            files.write_bytes(f"{root}/{name}", b"1")
        seen = []
        for folder, subdirs, names in files.walk(root):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            seen += [os.path.relpath(os.path.join(folder, n), root) for n in sorted(names)]
        assert seen == ["top.txt", "cats/1.png", "cats/deep/3.png"], root
        assert list(files.walk(f"{root}/missing")) == []


def test_copy_and_stat_between_local_and_remote(tmp_path, ram_root):
    source = str(tmp_path / "a.bin")
    files.write_bytes(source, b"12345")
    files.copy(source, f"{ram_root}/a.bin")
    files.copy(f"{ram_root}/a.bin", str(tmp_path / "b.bin"))
    files.copy(str(tmp_path / "b.bin"), str(tmp_path / "a.bin"))  # replaces
    assert files.read_bytes(str(tmp_path / "a.bin")) == b"12345"
    local, far = files.stat(source), files.stat(f"{ram_root}/a.bin")
    assert (local.size, far.size) == (5, 5) and local.path == source
    assert local.mtime_ns == os.stat(source).st_mtime_ns  # not cut to whole seconds


def test_open_file_writes_text_on_both_kinds(tmp_path, ram_root):
    for root in (str(tmp_path), ram_root):
        with files.open_file(f"{root}/lines.txt", "w") as f:
            f.write("é\n")
        with files.open_file(f"{root}/lines.txt", "r") as f:
            assert list(f) == ["é\n"]
