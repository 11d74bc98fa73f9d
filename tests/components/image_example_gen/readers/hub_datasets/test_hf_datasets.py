"""Hugging Face Parquet shards (the Hub's layout) and save_to_disk folders: listing, rows
read back, bad rows, streaming.

The datasets are written here from the bundled digits to the documented formats with
pyarrow 10 (tests/support/foreign_datasets.py); test_hf_real_tools.py reads what a current
`datasets` writes.
"""
import tracemalloc

import pytest

from components.image_example_gen.readers.hub_datasets import hf_datasets, hf_features, hf_rows
from components.image_example_gen.readers.folder_tree import DatasetError, splits_hashed
from settings.config import PipelineConfig
from tests.support import foreign_datasets as fd

OPTIONS = PipelineConfig.from_values().ingest_options()


def read_all(listing, root):
    """fd.read_all through this reader."""
    return fd.read_all(listing, root, hf_rows.read_hf_unit, OPTIONS)


def _expected(listing, root, rows_by_file):
    """What every row should read back as: {file#row: (label, class, bytes)}."""
    return {f"{path}#{row}": (label, fd.NAMES[label], data)
            for path, rows in rows_by_file.items() for row, (data, label) in enumerate(rows)}


@pytest.mark.parametrize("layout", ["data", "split_dirs"])
@pytest.mark.parametrize("declared_in", ["schema", "card"])
def test_hub_parquet_keeps_its_splits_and_declared_class_order(tmp_path, layout, declared_in):
    train, validation, test = fd.digit_rows(4), fd.digit_rows(2, 4), fd.digit_rows(1, 6)
    root = fd.write_hub_parquet(tmp_path / "hub", {"train": train, "validation": validation,
                                                   "test": test}, layout=layout,
                                metadata=declared_in == "schema", card=declared_in == "card")
    assert hf_datasets.looks_like_hf_parquet(str(root))
    listing = hf_datasets.list_hf_parquet(str(root), OPTIONS)
    assert listing.classes == list(fd.NAMES) and listing.format == "hf-parquet"
    assert listing.unused == ["test"] and not splits_hashed(listing)
    assert {u.split for u in listing.files} == {"train", "eval"}
    examples, skipped = read_all(listing, root)
    assert not skipped and len(examples) == len(train) + len(validation)
    prefix = "data/train-" if layout == "data" else "train/"
    first = next(u.path for u in listing.files if u.path.startswith(prefix))
    want = _expected(listing, root, {first: train[0::2]})
    for relpath, (label, name, data) in want.items():
        assert examples[relpath][0] == "train" and examples[relpath][1:] == (label, name, data)


def test_string_labels_are_numbered_in_code_point_order(tmp_path):
    rows = [(data, ["b", "a", "Ä"][label]) for data, label in fd.digit_rows(2)]
    root = fd.write_hub_parquet(tmp_path / "hub", {"train": rows}, shards=1, metadata=False,
                                string_labels=True)
    listing = hf_datasets.list_hf_parquet(str(root), OPTIONS)
    assert listing.classes == ["a", "b", "Ä"] and splits_hashed(listing)
    examples, _ = read_all(listing, root)
    assert examples["data/train-00000-of-00001.parquet#0"][1:3] == (1, "b")


def test_string_labels_of_save_to_disk_are_read_in_the_listing_pass(tmp_path, monkeypatch):
    rows = [(data, ["b", "a", "c"][label]) for data, label in fd.digit_rows(2)]
    root = fd.write_save_to_disk(tmp_path / "disk", {None: rows}, string_labels=True)
    reads = []
    original = hf_datasets.arrow_batches
    monkeypatch.setattr(hf_datasets, "arrow_batches",
                        lambda path: reads.append(path) or original(path))
    monkeypatch.setattr(hf_datasets, "batches", None)  # no second pass
    listing = hf_datasets.list_hf_disk(str(root), OPTIONS)
    assert listing.classes == ["a", "b", "c"] and len(reads) == 2  # each file once
    examples, _ = read_all(listing, root)
    assert examples["data-00001-of-00002.arrow#0"][1:3] == (1, "b")  # rows[1]: a 0, "b"


def test_integer_labels_without_names_are_their_ids(tmp_path):
    root = fd.write_hub_parquet(tmp_path / "hub", {"train": fd.digit_rows(1)}, shards=1,
                                metadata=False)
    assert hf_datasets.list_hf_parquet(str(root), OPTIONS).classes == ["0", "1", "2"]


def test_bad_image_and_undeclared_label_are_skipped_naming_file_and_row(tmp_path):
    rows = fd.digit_rows(1)
    rows[1] = (b"\x89PNG\r\n\x1a\n truncated", 1)
    rows[2] = (rows[2][0], 7)
    rows.append((rows[0][0], -1))  # the Hub's "no label" in test splits
    fd.write_parquet(tmp_path / "hub" / "data" / "train-00000-of-00001.parquet", rows)
    listing = hf_datasets.list_hf_parquet(str(tmp_path / "hub"), OPTIONS)
    examples, skipped = read_all(listing, tmp_path / "hub")
    name = "data/train-00000-of-00001.parquet"
    assert list(examples) == [f"{name}#0"]
    assert [s["path"] for s in skipped] == [f"{name}#1", f"{name}#2", f"{name}#3"]
    assert skipped[0]["reason"].startswith("cannot decode")
    assert "label 7 is not one of the dataset's 3 classes" in skipped[1]["reason"]
    assert "label -1" in skipped[2]["reason"]


def test_a_missing_label_column_names_the_columns_and_the_flag(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    (tmp_path / "x").mkdir()
    pq.write_table(pa.table({"img": [b"x"], "y": [1.5]}), str(tmp_path / "x" / "a.parquet"))
    with pytest.raises(DatasetError, match=r"no label column; name one with --label-key\. "
                                           r"Columns: img \(binary\), y \(double\)"):
        hf_datasets.list_hf_parquet(str(tmp_path / "x"), OPTIONS)


def _noise_pngs(count: int):
    """PNGs of 64x64 RGB noise (about 12 KB each: PNG cannot compress noise)."""
    import io
    import numpy as np
    from PIL import Image
    rng, found = np.random.default_rng(0), []
    for i in range(count):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(buf, "PNG")
        found.append((buf.getvalue(), i % 3))
    return found


def _peaks(path, unit):
    """(batch sizes, peak of Python allocations, peak of Arrow's pool) reading a unit."""
    import pyarrow as pa
    sizes, arrow = [], [0]
    tracemalloc.start()
    try:
        for batch in hf_rows.batches(str(path), unit, ["image", "label"]):
            sizes.append(batch.num_rows)
            arrow.append(pa.total_allocated_bytes())
        return sizes, tracemalloc.get_traced_memory()[1], max(arrow)
    finally:
        tracemalloc.stop()


def test_parquet_is_read_in_batches_in_memory_that_does_not_grow_with_the_file(tmp_path,
                                                                              monkeypatch):
    """300 and 1,200 images (3.7 and 15 MB) in row groups of 100, as `datasets` writes
    image datasets: read in batches, both peaks are the same for the file four times as
    large. pyarrow 10 decodes a row group whole: a worker holds about one (1.2 MB here)."""
    monkeypatch.setattr(hf_datasets, "UNIT_ROWS", 10_000)  # one unit a file
    rows = _noise_pngs(300)
    found = {}
    for count in (300, 1200):
        path = fd.write_parquet(tmp_path / f"{count}.parquet", (rows * 4)[:count],
                                row_group_size=100)
        [unit] = hf_datasets.list_hf_parquet(str(path), OPTIONS).files
        found[count] = _peaks(path, unit)
        assert found[count][0] == [hf_rows.BATCH_ROWS] * (count // 64) + [count % 64]
    row_group = sum(len(data) for data, _ in rows[:100])
    assert found[1200][1] < found[300][1] + row_group, found
    assert found[1200][2] < found[300][2] + row_group, found
    assert found[1200][1] < 15e6 / 4, found


def test_units_cut_files_at_row_groups(tmp_path, monkeypatch):
    rows = fd.digit_rows(100)[:250]
    path = fd.write_parquet(tmp_path / "train.parquet", rows, row_group_size=100)
    monkeypatch.setattr(hf_datasets, "UNIT_ROWS", 150)
    units = hf_datasets.list_hf_parquet(str(path), OPTIONS).files
    assert [(u.start, u.stop, u.first_group, u.stop_group) for u in units] == [
        (0, 200, 0, 2), (200, 250, 2, 3)]
    examples, _ = read_all(hf_datasets.list_hf_parquet(str(path), OPTIONS), path)
    assert len(examples) == 250


@pytest.mark.parametrize("splits", [{"train": 4, "test": 2}, {None: 4}])
def test_save_to_disk_folders_keep_their_splits(tmp_path, splits):
    rows = {split: fd.digit_rows(n) for split, n in splits.items()}
    root = fd.write_save_to_disk(tmp_path / "disk", rows)
    assert hf_datasets.looks_like_hf_disk(str(root))
    assert not hf_datasets.looks_like_hf_parquet(str(root))
    listing = hf_datasets.list_hf_disk(str(root), OPTIONS)
    assert listing.classes == list(fd.NAMES) and listing.format == "hf-disk"
    assert sorted(str(u.split) for u in listing.files) == sorted(
        ["train", "train", "eval", "eval"] if "test" in splits else ["None", "None"])
    examples, skipped = read_all(listing, root)
    assert not skipped and len(examples) == sum(len(r) for r in rows.values())
    folder = "test/" if "test" in splits else ""
    data, label = rows["test" if "test" in splits else None][1]  # file 1, row 0
    relpath = f"{folder}data-00001-of-00002.arrow#0"
    assert examples[relpath][1:] == (label, fd.NAMES[label], data)


def test_detection_leaves_class_folders_alone(tmp_path, mnist_subset):
    assert not hf_datasets.looks_like_hf_parquet(str(mnist_subset))
    assert not hf_datasets.looks_like_hf_disk(str(mnist_subset))


def test_sampled_images_are_the_first_rows(tmp_path):
    rows = fd.digit_rows(2)
    root = fd.write_hub_parquet(tmp_path / "hub", {"train": rows}, shards=1)
    listing = hf_datasets.list_hf_parquet(str(root), OPTIONS)
    assert hf_rows.sample_hf_images(str(root), listing, 3, OPTIONS) == [d for d, _ in rows[:3]]


def test_files_opened_as_a_bucket_opens_them_are_read(tmp_path, monkeypatch):
    """core/storage opens gs:// files as tf.io.gfile.GFile, which has no `closed` (pyarrow
    checks it): Parquet and Arrow files read through GFile objects."""
    import tensorflow as tf
    from core.storage import files
    monkeypatch.setattr(files, "open_file", lambda path, mode="rb": tf.io.gfile.GFile(path,
                                                                                     mode))
    rows = {"train": fd.digit_rows(2), "validation": fd.digit_rows(1, 2)}
    for root, lister in ((fd.write_hub_parquet(tmp_path / "hub", rows),
                          hf_datasets.list_hf_parquet),
                         (fd.write_save_to_disk(tmp_path / "disk", rows),
                          hf_datasets.list_hf_disk)):
        examples, skipped = read_all(lister(str(root), OPTIONS), root)
        assert len(examples) == 9 and not skipped


def test_cards_declare_names_by_id_and_per_config():
    card = """---
dataset_info:
- config_name: small
  features:
  - name: label
    dtype:
      class_label:
        names:
          '0': x
- config_name: default
  features:
  - name: picture
    dtype: image
  - name: kind
    dtype:
      class_label:
        names:
          1: dog
          0: cat
          3: owl
          2: cow
---
"""
    declared = hf_features.from_card(card)
    assert declared.images == ("picture",)
    assert declared.names == {"kind": ["cat", "dog", "cow", "owl"]}
    assert hf_features.from_card("# no front matter") == hf_features.Declared()
    with pytest.raises(DatasetError, match="class_label ids 0, 1, 2, 10 are not 0..n-1"):
        hf_features.from_card(card.replace("3: owl", "10: owl"))


def test_key_flags_choose_among_several_columns():
    import pyarrow as pa
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("left", image), ("right", image), ("fine", pa.int64()),
                        ("coarse", pa.int64())])
    declared = hf_features.Declared(names={"fine": ["a"], "coarse": ["b"]})
    with pytest.raises(DatasetError, match=r"several image columns \(left, right\); name one "
                                           r"with --image-key"):
        hf_features.choose_columns(schema, declared, OPTIONS, "x.parquet")
    options = PipelineConfig.from_values(image_key="right", label_key="coarse").ingest_options()
    assert hf_features.choose_columns(schema, declared, options, "x.parquet") == \
        hf_features.Columns("right", "coarse", False)


def test_a_cut_parquet_file_is_named_at_listing(tmp_path):
    path = fd.write_parquet(tmp_path / "train.parquet", fd.digit_rows(2))
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(DatasetError, match=r"train.parquet: not a readable Parquet file "
                                           r"\(Parquet magic bytes not found"):
        hf_datasets.list_hf_parquet(str(path), OPTIONS)


def test_a_corrupt_row_group_is_reported_with_the_rows_after_it(tmp_path):
    """As a truncated TFRecord file: what was read is kept, the rest reported (pyarrow
    decodes a row group whole, so the rows of the broken one go with it)."""
    path = fd.write_parquet(tmp_path / "train.parquet", fd.digit_rows(20), row_group_size=20)
    listing = hf_datasets.list_hf_parquet(str(path), OPTIONS)
    data = bytearray(path.read_bytes())
    data[len(data) // 3:len(data) // 3 + 200] = b"\xff" * 200  # inside the first row group
    path.write_bytes(bytes(data))
    [skipped] = [i for i in hf_rows.read_hf_unit(listing.files[0], str(path), listing.classes,
                                                 OPTIONS, lambda relpath: "train", {})
                 if isinstance(i, dict)]
    assert skipped == {"path": "train.parquet#0+",
                       "reason": "unreadable Parquet file: Corrupt snappy compressed data."}


def test_rows_that_name_their_image_file_are_read_from_it(tmp_path):
    """datasets' to_parquet of image files keeps their paths, not their bytes: absolute
    paths, or paths relative to the Parquet file's folder, are read (the absolute one under
    --allowed-root); a missing one is a skipped row naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    (data, label), (other, _) = fd.digit_rows(1)[:2]
    (tmp_path / "hub" / "data" / "img").mkdir(parents=True)
    (tmp_path / "hub" / "data" / "img" / "a.png").write_bytes(data)
    (tmp_path / "b.png").write_bytes(other)
    images = [{"bytes": None, "path": "img/a.png"},
              {"bytes": None, "path": str(tmp_path / "b.png")},
              {"bytes": None, "path": "img/gone.png"}]
    pq.write_table(pa.table({"image": images, "label": [label] * 3}),
                   str(tmp_path / "hub" / "data" / "train-00000-of-00001.parquet"))
    listing = hf_datasets.list_hf_parquet(str(tmp_path / "hub"), OPTIONS)
    options = PipelineConfig.from_values(allowed_root=str(tmp_path)).ingest_options()
    examples, skipped = fd.read_all(listing, tmp_path / "hub", hf_rows.read_hf_unit, options)
    name = "data/train-00000-of-00001.parquet"
    assert [examples[f"{name}#{i}"][3] for i in (0, 1)] == [data, other]
    assert skipped[0]["path"] == f"{name}#2"
    assert "its path " + str(tmp_path / "hub" / "data" / "img" / "gone.png") in \
        skipped[0]["reason"]


def test_rows_naming_image_files_read_them_only_under_the_allowed_roots(tmp_path):
    """A row without bytes names its image file (to_parquet of image files): one in the
    dataset's folder is read, one outside it (absolute, or ../) is refused as a manifest's
    row would be, until --allowed-root names its folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    (tmp_path / "hub" / "images").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (data_in, label_in), (data_out, label_out) = fd.digit_rows(1)[:2]
    (tmp_path / "hub" / "images" / "in.png").write_bytes(data_in)
    (tmp_path / "elsewhere" / "out.png").write_bytes(data_out)
    paths = ["../images/in.png", str(tmp_path / "elsewhere" / "out.png"),
             "../../elsewhere/out.png"]
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table({"image": [{"bytes": None, "path": p} for p in paths],
                      "label": [label_in, label_out, label_out]},
                     schema=pa.schema([("image", image), ("label", pa.int64())]))
    (tmp_path / "hub" / "data").mkdir()
    pq.write_table(table, str(tmp_path / "hub" / "data" / "train.parquet"))
    root = tmp_path / "hub"
    listing = hf_datasets.list_hf_parquet(str(root), OPTIONS)
    examples, skipped = read_all(listing, root)
    assert [e[3] for e in examples.values()] == [data_in]
    assert [s["path"] for s in skipped] == ["data/train.parquet#1", "data/train.parquet#2"]
    assert all(f"outside the allowed roots ({root})" in s["reason"] for s in skipped)
    widened = PipelineConfig.from_values(
        allowed_root=str(tmp_path / "elsewhere")).ingest_options()
    examples, skipped = fd.read_all(listing, root, hf_rows.read_hf_unit, widened)
    assert skipped == [] and len(examples) == 3
