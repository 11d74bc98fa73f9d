"""--labels: CSV or JSON lines, matched by id, else by file name; the accuracy measure."""
import json

import pytest

from core.errors import UsageError
from monitor.labels import accuracy, class_id, matched, read_labels
from settings.command_sections import MonitorSettings

NAMES = ["cat", "dog"]


def test_csv_with_or_without_a_header_and_json_lines_read_alike(tmp_path):
    (tmp_path / "a.csv").write_text("id,label\nimgs/1.png,cat\nreq-2,dog\n")
    (tmp_path / "b.csv").write_text("imgs/1.png,cat\nreq-2,dog\n")
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in (
        {"id": "imgs/1.png", "label": "cat"}, {"id": "req-2", "label": "dog"})) + "\n")
    expected = {"imgs/1.png": "cat", "req-2": "dog"}
    assert all(read_labels(str(tmp_path / n)) == expected for n in ("a.csv", "b.csv", "c.jsonl"))


@pytest.mark.parametrize("name, text", [("x.csv", "a,b,c\n"), ("x.jsonl", "{\"id\": 1}\n"),
                                        ("x.csv", ""), ("missing.csv", None)])
def test_a_bad_labels_file_is_a_usage_error_naming_the_flag(tmp_path, name, text):
    if text is not None:
        (tmp_path / name).write_text(text)
    with pytest.raises(UsageError, match="--labels"):
        read_labels(str(tmp_path / name))


def test_ids_match_exactly_else_by_a_file_name_only_one_label_has():
    labels = {"gs://b/day1/1.png": "cat", "2.png": "dog", "a/3.png": "cat", "b/3.png": "dog",
              "req-9": "dog"}
    answers = [("gs://b/day1/1.png", 0), ("/srv/x/2.png", 1), ("/srv/x/3.png", 0),
               ("req-9", 0), ("unlabelled", 1)]
    # 1.png exactly (right), 2.png by name (right), 3.png ambiguous (skipped), req-9 (wrong)
    assert matched(answers, labels, NAMES) == (3, 2)


def test_a_label_is_a_class_name_or_else_a_class_id():
    assert [class_id(v, NAMES) for v in ("dog", "0", "1", "2", "bird")] == [1, 0, 1, None, None]
    assert class_id("1", ["1", "0"]) == 0  # a name wins over an id


def test_accuracy_needs_min_labeled_records():
    reference = {"eval": {"accuracy": 0.97}}
    settings = MonitorSettings(min_labeled=20)
    assert accuracy(19, 19, reference, settings) is None
    assert accuracy(20, 18, reference, settings) == {
        "value": 0.9, "threshold": 0.05, "reference": 0.97, "labeled": 20}
