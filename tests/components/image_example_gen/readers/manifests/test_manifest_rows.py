"""Bad manifests: each refused row is named with its file and row number and counted in the
listing's skipped records (which the ingest report lists); --strict refuses the data.
And the allowed-root rule: `../`, absolute paths, `file://` and symlinks leaving the root."""
import json
import os

import pytest

from components.image_example_gen.readers.folder_tree import DatasetError
from components.image_example_gen.readers.formats import list_dataset
from settings.config import PipelineConfig
from tests.support.manifests import digits_beside
from tests.support.paths import MNIST_PNG


def listed(manifest, strict=False, **values):
    return list_dataset(str(manifest), PipelineConfig.from_values(
        strict=strict, **values).ingest_options())


def good(tmp_path, count=4):
    """`count` rows that list fine, as `use,image,label` lines; the digits copied beside."""
    rows = digits_beside(tmp_path, per_class=2)[:count]
    return [f"training,{image},{label}" for image, label, _ in rows[:count - 1]] + \
        [f"validation,{rows[-1][0]},{rows[-1][1]}"]


def refused(manifest, reason, row=2, **values):
    """Checks that the manifest's `row` is refused for `reason`, and fatal with --strict."""
    listing = listed(manifest, **values)
    name = os.path.basename(str(manifest))
    assert [r["path"] for r in listing.skipped] == [f"{name}:{row}"]
    assert reason in listing.skipped[0]["reason"], listing.skipped[0]["reason"]
    with pytest.raises(DatasetError, match=f"--strict: --data .*{name}: 1 row.*{name}:{row}: "):
        listed(manifest, strict=True, **values)
    return listing


@pytest.mark.parametrize("row, reason", [
    ("training,0/missing.png,0", "0/missing.png: no such image file"),
    ("sometimes,{image},1", "unknown ML_USE 'sometimes'"),
    ("training,{image},1,extra", "4 columns; a Vertex AI CSV row is"),
    ("training,{image}", "no label"),
])
def test_a_bad_csv_row_is_named_counted_and_fatal_with_strict(tmp_path, row, reason):
    lines = good(tmp_path)
    lines.insert(1, row.format(image=lines[0].split(",")[1]))
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    listing = refused(tmp_path / "m.csv", reason)
    assert len(listing.files) == 4


def test_a_duplicate_row_and_a_second_label_are_refused(tmp_path):
    lines = good(tmp_path)
    use, image, label = lines[0].split(",")
    (tmp_path / "dup.csv").write_text("\n".join([lines[0], lines[0], *lines[1:]]) + "\n")
    refused(tmp_path / "dup.csv", f"{image}: duplicate of row 1")
    (tmp_path / "multi.csv").write_text(
        "\n".join([lines[0], f"{use},{image},other", *lines[1:]]) + "\n")
    refused(tmp_path / "multi.csv", "a second label 'other' (row 1 gave '0'): multi-label is "
            "not supported yet")


@pytest.mark.parametrize("line, reason", [
    ('{"imageGcsUri": "0/x.png", ', "bad JSON"),
    ('{"classificationAnnotation": {"displayName": "0"}}', "no imageGcsUri string"),
    ('{"imageGcsUri": "{image}", "classificationAnnotations": [{"displayName": "a"}, '
     '{"displayName": "b"}]}', "2 labels (a, b): multi-label is not supported yet"),
    ('{"imageGcsUri": "{image}", "classificationAnnotation": {"displayName": "a"}, '
     '"dataItemResourceLabels": {"aiplatform.googleapis.com/ml_use": "later"}}',
     "unknown ML_USE/split 'later'"),
])
def test_a_bad_jsonl_row_is_named_counted_and_fatal_with_strict(tmp_path, line, reason):
    items = []
    for text in good(tmp_path):
        use, image, label = text.split(",")
        items.append(json.dumps({"imageGcsUri": image,
                                 "classificationAnnotation": {"displayName": label}}))
    items.insert(1, line.replace("{image}", json.loads(items[0])["imageGcsUri"] + "x"))
    (tmp_path / "m.jsonl").write_text("\n".join(items) + "\n")
    refused(tmp_path / "m.jsonl", reason)


def test_a_headed_csv_row_with_the_wrong_column_count_is_refused(tmp_path):
    lines = [",".join(line.split(",")[1:]) for line in good(tmp_path)]
    (tmp_path / "m.csv").write_text("\n".join(["file,label", lines[0], "a,b,c", *lines[1:]]))
    refused(tmp_path / "m.csv", "3 columns; the header has 2", row=3)


def test_a_manifest_with_only_bad_rows_fails_naming_them(tmp_path):
    (tmp_path / "m.csv").write_text("training,gone.png,0\n")
    with pytest.raises(DatasetError, match="no usable image rows; 1 refused, first: m.csv:1: "
                                           "gone.png: no such image file"):
        listed(tmp_path / "m.csv")


def test_splits_given_without_eval_fail_before_anything_runs(tmp_path):
    lines = [line.replace("validation", "training") for line in good(tmp_path)]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="every row is for training"):
        listed(tmp_path / "m.csv")


@pytest.mark.parametrize("image", ["../outside/1.png", "{outside}/1.png", "file://{outside}/1.png",
                                   "sub/../../outside/1.png", "link/1.png"])
def test_a_row_outside_the_allowed_root_is_refused(tmp_path, image):
    data, outside = tmp_path / "data", tmp_path / "outside"
    outside.mkdir()
    (outside / "1.png").write_bytes((MNIST_PNG / "0" / "0013.png").read_bytes())
    lines = good(data)
    (data / "link").symlink_to(outside)  # a folder link escaping the root
    lines.insert(1, f"training,{image.format(outside=outside)},0")
    (data / "m.csv").write_text("\n".join(lines) + "\n")
    refused(data / "m.csv", "outside the allowed roots")
    # Widened, the same row is taken: by the folder's real path, or through the link.
    listing = listed(data / "m.csv", allowed_root=f"/nonexistent,{outside}")
    assert listing.skipped == [] and len(listing.files) == 5


def test_a_symlinked_file_escaping_the_root_is_refused(tmp_path):
    data = tmp_path / "data"
    lines = good(data)
    (data / "0" / "escape.png").symlink_to(MNIST_PNG / "0" / "0013.png")
    lines.insert(1, "training,0/escape.png,0")
    (data / "m.csv").write_text("\n".join(lines) + "\n")
    refused(data / "m.csv", "0/escape.png: outside the allowed roots")


def _kaggle(root, count=6):
    """Kaggle's layout: labels.csv of `id,breed` (ids without extension) beside train/."""
    (root / "train").mkdir(parents=True)
    lines = ["id,breed"]
    for i in range(count):
        name = f"{i:08x}"
        label = "0" if i % 2 else "1"
        source = sorted((MNIST_PNG / label).iterdir())[i]
        (root / "train" / f"{name}.png").write_bytes(source.read_bytes())
        lines.append(f"{name},{label}")
    (root / "labels.csv").write_text("\n".join(lines) + "\n")
    return root / "labels.csv"


def test_kaggle_ids_without_extension_under_an_image_folder(tmp_path):
    manifest = _kaggle(tmp_path)
    listing = listed(manifest, image_folder="train")
    assert listing.format == "csv" and listing.skipped == []
    assert sorted(f.relpath for f in listing.files) == sorted(
        f"train/{p.name}" for p in (tmp_path / "train").iterdir())
    # Without --image-folder the ids are looked for beside the manifest, and named missing.
    with pytest.raises(DatasetError, match=r"labels.csv:2: 00000000: no such image file "
                                           r"\(.*/00000000, nor with an image extension\)"):
        listed(manifest)


def test_an_id_naming_two_files_is_refused(tmp_path):
    manifest = _kaggle(tmp_path)
    (tmp_path / "train" / "00000000.jpg").write_bytes(b"a second file, same id")
    refused(manifest, "00000000: names 2 files (00000000.jpg, 00000000.png); give the file "
            "name with its extension", image_folder="train")


def test_an_image_folder_elsewhere_is_allowed_but_rows_cannot_leave_it(tmp_path):
    manifest = _kaggle(tmp_path / "images")
    (tmp_path / "labels").mkdir()
    moved = (tmp_path / "labels" / "labels.csv")
    lines = manifest.read_text().splitlines()
    moved.write_text("\n".join([*lines, "../../etc/passwd,0"]) + "\n")
    listing = listed(moved, image_folder=str(tmp_path / "images" / "train"))
    assert len(listing.files) == 6
    assert [r["reason"] for r in listing.skipped] == [
        "../../etc/passwd: outside the allowed roots "
        f"({tmp_path / 'labels'}, {tmp_path / 'images' / 'train'}); add its folder with "
        "--allowed-root"]
