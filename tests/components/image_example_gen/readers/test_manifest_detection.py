"""--format auto on a manifest file: .jsonl is Vertex AI's; a .csv's first row tells a
header from Vertex AI rows; a .csv that tells neither is refused, naming --format."""
import pytest

from components.image_example_gen.readers.folder_tree import DatasetError
from components.image_example_gen.readers.formats import detect_format


@pytest.mark.parametrize("name, first_row, expected", [
    ("m.jsonl", '{"imageGcsUri": "gs://b/1.jpg"}', "vertex-jsonl"),
    ("m.csv", "filename,label", "csv"),
    ("m.csv", "image_id,category,split", "csv"),
    ("m.csv", "id,breed", "csv"),  # Kaggle's labels.csv
    ("M.CSV", "\ufeffPath,Class", "csv"),
    ("m.csv", "gs://b/1.jpg,daisy", "vertex-csv"),
    ("m.csv", "TRAINING,gs://b/1.jpg,daisy", "vertex-csv"),
    ("m.csv", "images/1.JPEG,daisy", "vertex-csv"),
    ("m.csv", "test,1.png", "vertex-csv"),
    ("m.csv", "1.png", "vertex-csv"),
    # A header naming an image (a path column called "image.png") is still read as rows.
    ("m.csv", "file,image.png", "vertex-csv"),
])
def test_a_manifest_kind_is_detected_from_its_name_and_first_row(tmp_path, name, first_row,
                                                                  expected):
    (tmp_path / name).write_text(first_row + "\nmore,rows\n")
    assert detect_format(str(tmp_path / name)) == expected


@pytest.mark.parametrize("first_row", ["key,label", "training,daisy", "a,b,c", ""])
def test_a_csv_that_tells_neither_kind_is_refused_naming_format(tmp_path, first_row):
    (tmp_path / "m.csv").write_text(first_row + "\n")
    with pytest.raises(DatasetError, match=r"--data .*m\.csv: cannot tell its kind .*--format "
                                           r"csv .*--format vertex-csv"):
        detect_format(str(tmp_path / "m.csv"))


def test_other_files_and_folders_are_detected_as_before(tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "notes.txt").write_text("filename,label\n")
    assert detect_format(str(tmp_path)) == "folder"
    assert detect_format(str(tmp_path / "notes.txt")) == "folder"
