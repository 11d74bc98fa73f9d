"""Vertex AI import files (CSV and JSON Lines) and headed CSV manifests of the digits:
splits are the manifest's, classes its names sorted, images anywhere it points."""
import collections
import json

import pytest

from components.image_example_gen.readers.manifests.csv_manifest import list_csv_manifest
from components.image_example_gen.readers.folder_tree import DatasetError, splits_hashed
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.readers.manifests.import_files import (list_vertex_csv,
                                                               list_vertex_jsonl)
from components.image_example_gen.readers.manifests.manifest_paths import image_path
from settings.config import PipelineConfig
from tests.support.manifests import (digit_rows, digits_beside, write_headed_csv,
                                     write_vertex_csv, write_vertex_jsonl)
from tests.support.paths import MNIST_PNG

WRITERS = {"vertex-csv": (write_vertex_csv, list_vertex_csv),
           "vertex-jsonl": (write_vertex_jsonl, list_vertex_jsonl),
           "csv": (write_headed_csv, list_csv_manifest)}
SUFFIX = {"vertex-csv": ".csv", "vertex-jsonl": ".jsonl", "csv": ".csv"}


def options(**values):
    return PipelineConfig.from_values(**values).ingest_options()


def split_counts(listing):
    return collections.Counter(unit.split for unit in listing.files)


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_manifest_beside_its_images_keeps_its_splits_and_sorted_classes(tmp_path, fmt):
    rows = digits_beside(tmp_path, per_class=10)
    write, list_manifest = WRITERS[fmt]
    manifest = write(tmp_path / f"labels{SUFFIX[fmt]}", rows)
    listing = list_manifest(manifest, options())
    assert listing.classes == sorted({label for _, label, _ in rows})
    # training -> train; validation -> eval; test is left unused, as a test/ folder beside val/
    assert split_counts(listing) == {"train": 80, "eval": 10}
    assert listing.unused == ["test (10 rows)"] and listing.skipped == []
    assert {unit.relpath for unit in listing.files} == {
        image for image, _, use in rows if use != "test"}
    unit = listing.files[0]
    assert image_path(manifest, unit.relpath) == str(tmp_path / unit.relpath)
    assert listing.classes[unit.label] == unit.relpath.split("/")[0]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_absolute_paths_under_an_allowed_root_are_kept_absolute(tmp_path, fmt):
    write, list_manifest = WRITERS[fmt]
    manifest = write(tmp_path / f"m{SUFFIX[fmt]}", digit_rows(3), prefix=f"{MNIST_PNG}/")
    listing = list_manifest(manifest, options(allowed_root=str(MNIST_PNG)))
    assert len(listing.files) == 30 and listing.skipped == []
    assert all(unit.relpath.startswith(str(MNIST_PNG)) for unit in listing.files)
    assert image_path(manifest, listing.files[0].relpath) == listing.files[0].relpath


def test_labels_are_numbered_by_code_point(tmp_path):
    rows = digits_beside(tmp_path, per_class=2)
    names = {"0": "zebra", "1": "Zebra", "2": "äpfel", "3": "apple"}
    text = "".join(f"{image},{names.get(label, 'b')}\n" for image, label, _ in rows)
    (tmp_path / "m.csv").write_text(text)
    listing = list_vertex_csv(str(tmp_path / "m.csv"), options())
    assert listing.classes == ["Zebra", "apple", "b", "zebra", "äpfel"]


def test_vertex_csv_reads_every_row_shape_and_legacy_ml_use(tmp_path):
    images = [image for image, _, _ in digits_beside(tmp_path, per_class=1)]
    (tmp_path / "m.csv").write_text(
        f"TRAIN,{images[0]},zero\nVaLiDaTiOn,{images[1]},one\n{images[2]},two\n"
        f"UNASSIGNED,{images[3]},one\n,{images[4]},two\n")
    listing = list_vertex_csv(str(tmp_path / "m.csv"), options())
    assert [(u.relpath, u.split) for u in listing.files] == [
        (images[0], "train"), (images[1], "eval"), (images[2], None), (images[3], None),
        (images[4], None)]


def test_unassigned_rows_beside_split_ones_are_hashed(tmp_path):
    rows = digits_beside(tmp_path, per_class=10)
    text = "".join(f"{use if i % 2 else 'UNASSIGNED'},{image},{label}\n"
                   for i, (image, label, use) in enumerate(rows))
    (tmp_path / "m.csv").write_text(text)
    listing = list_vertex_csv(str(tmp_path / "m.csv"), options())
    assert split_counts(listing)[None] == 50 and not splits_hashed(listing)


def test_a_manifest_without_splits_is_hash_split(tmp_path):
    rows = digits_beside(tmp_path, per_class=3)
    (tmp_path / "m.csv").write_text("".join(f"{image},{label}\n" for image, label, _ in rows))
    listing = list_vertex_csv(str(tmp_path / "m.csv"), options())
    assert splits_hashed(listing) and len(listing.files) == 30


def test_jsonl_takes_a_one_item_annotation_list(tmp_path):
    images = [image for image, _, _ in digits_beside(tmp_path, per_class=1)]
    item = {"imageGcsUri": images[3], "classificationAnnotations": [{"displayName": "3"}]}
    other = {"imageGcsUri": images[4], "classificationAnnotation": {"displayName": "4"}}
    (tmp_path / "m.jsonl").write_text(json.dumps(item) + "\n\n" + json.dumps(other) + "\n")
    listing = list_vertex_jsonl(str(tmp_path / "m.jsonl"), options())
    assert listing.classes == ["3", "4"] and splits_hashed(listing)


def test_headed_csv_finds_columns_by_name_or_flag(tmp_path):
    rows = digits_beside(tmp_path, per_class=2)
    manifest = write_headed_csv(tmp_path / "m.csv", rows, header="Image_Path,Class,subset")
    assert split_counts(list_csv_manifest(manifest, options())) == {"train": 10, "eval": 10}
    odd = write_headed_csv(tmp_path / "odd.csv", rows, header="img_x,kind,part")
    with pytest.raises(DatasetError, match="no image path column.*--path-column"):
        list_csv_manifest(odd, options())
    listing = list_csv_manifest(odd, options(path_column="img_x", label_column="kind"))
    assert splits_hashed(listing) and len(listing.files) == 20
    with pytest.raises(DatasetError, match="--split-column fold: no such column"):
        list_csv_manifest(odd, options(path_column="img_x", label_column="kind",
                                       split_column="fold"))


def test_list_dataset_names_the_manifest_format(tmp_path):
    rows = digits_beside(tmp_path, per_class=2)
    for fmt, (write, _) in WRITERS.items():
        manifest = write(tmp_path / f"{fmt}{SUFFIX[fmt]}", rows)
        assert list_dataset(manifest, options()).format == fmt


def test_a_remote_manifest_lists_its_folder_once_not_each_image(tmp_path, monkeypatch):
    import tensorflow as tf
    from core.storage import files
    rows = digit_rows(2)
    for image, _, _ in rows:
        tf.io.gfile.makedirs(f"ram://manifests/d/{image.split('/')[0]}")
        with tf.io.gfile.GFile(f"ram://manifests/d/{image}", "wb") as f:
            f.write((MNIST_PNG / image).read_bytes())
    text = "".join(f"{use},{image},{label}\n" for image, label, use in rows)
    text += "training,0/gone.png,0\ntraining,ram://elsewhere/1.png,0\n"
    with tf.io.gfile.GFile("ram://manifests/d/m.csv", "w") as f:
        f.write(text)
    listed_folders = []
    list_dir = files.list_dir
    monkeypatch.setattr(files, "list_dir", lambda p: listed_folders.append(p) or list_dir(p))
    monkeypatch.setattr(files, "stat", lambda p: pytest.fail(f"stat of {p}"))
    listing = list_dataset("ram://manifests/d/m.csv", options())
    assert sorted(listed_folders) == [f"ram://manifests/d/{d}" for d in range(10)]
    assert len(listing.files) == 20 and listing.files[0].relpath == rows[0][0]
    assert [(r["path"], r["reason"].split(": ")[1]) for r in listing.skipped] == [
        ("m.csv:22", "outside the allowed roots (ram://manifests/d); add its folder with "
                     "--allowed-root"),
        ("m.csv:21", "no such image file (ram://manifests/d/0/gone.png)")]
