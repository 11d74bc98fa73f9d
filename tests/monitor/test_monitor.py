"""`imagepipe monitor` end to end through cli.main.main on a tiny real pushed model.

The clean window is the training images themselves; the drifted one, the same
images inverted (dark to bright). Exit 0 healthy, 3 alerting, 2 bad input, and
never a traceback.
"""
import json
import shutil

import pytest

from core.intervals import wilson
from cli.main import EXIT_ALERTING, main
from tests.support.monitored import VERSION, push_version, write_images


def _monitor(capsys, output, data, *extra):
    code = main(["monitor", "--output", str(output), "--data", str(data), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_window_like_the_training_data_is_healthy(tmp_path, pushed, capsys):
    output, paths = pushed
    window = tmp_path / "window"
    for path in paths:
        (window / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, window / path.parent.name / path.name)
    labels = tmp_path / "labels.csv"  # by file name: the window is a copy
    labels.write_text("".join(f"{p.name},{p.parent.name}\n" for p in paths))
    code, out, _ = _monitor(capsys, output, window, "--labels", str(labels))
    result = json.loads((output / "monitoring" / "imagepipe" / "monitor.json").read_text())
    print(json.dumps(result, indent=2))
    assert code == 0, out
    assert result["healthy"] and result["alerts"] == []
    assert result["version"] == VERSION and result["format"] == "images"
    assert result["window"] == {"records": 40, "scored": 40, "bad": 0, "bad_records": []}
    assert result["measures"]["input_drift"]["brightness"]["value"] == 0
    assert result["measures"]["prediction_drift"]["value"] == 0
    accuracy = result["measures"]["accuracy"]
    assert accuracy["labeled"] == 40 and accuracy["value"] == accuracy["reference"]
    assert accuracy["correct"] == round(accuracy["value"] * 40)  # and its 95% interval
    assert accuracy["interval"] == list(wilson(accuracy["correct"], 40))
    assert "40 labelled, 95% CI " in out
    assert "verdict   healthy" in out
    assert (output / "monitoring" / "imagepipe" / "monitor.html").exists()


def test_an_inverted_window_alerts_on_input_drift_and_exits_3(tmp_path, pushed, capsys):
    output, _ = pushed
    window = tmp_path / "window"
    write_images(window, 40, inverted=True)
    (window / "c0" / "broken.png").write_bytes(b"\x89PNG not really")
    report = tmp_path / "pages" / "drift.html"
    code, out, _ = _monitor(capsys, output, window, "--json", str(tmp_path / "m.json"),
                            "--report", str(report))
    result = json.loads((tmp_path / "m.json").read_text())
    print(json.dumps(result, indent=2))
    assert code == EXIT_ALERTING
    assert {"kind": "input_drift", "measure": "brightness",
            "value": result["measures"]["input_drift"]["brightness"]["value"],
            "threshold": 0.1} in result["alerts"]
    assert result["window"]["bad"] == 1
    assert result["window"]["bad_records"][0]["id"].endswith("broken.png")
    assert "ALERT" in out and "ALERTING" in out
    assert "data:image/png;base64," in report.read_text()


def test_an_empty_window_exits_2_naming_it(tmp_path, pushed, capsys):
    output, _ = pushed
    (tmp_path / "empty").mkdir()
    code, _, err = _monitor(capsys, output, tmp_path / "empty")
    assert code == 2 and "--data" in err and "no records" in err


def test_an_unknown_version_exits_2_naming_the_flag_and_the_folder(tmp_path, pushed, capsys):
    output, paths = pushed
    code, _, err = _monitor(capsys, output, paths[0].parent, "--version", "7")
    assert code == 2 and "--version 7" in err
    assert str(output / "serving" / "imagepipe") in err


def test_a_version_without_reference_exits_2_naming_the_file(tmp_path, reference, capsys):
    model_dir, paths, found = reference
    push_version(tmp_path / "out", model_dir, found, with_reference=False)
    code, _, err = _monitor(capsys, tmp_path / "out", paths[0].parent)
    assert code == 2 and "no monitoring reference" in err and "reference.json" in err


def test_a_reference_without_train_statistics_exits_2_saying_why(tmp_path, reference, capsys):
    model_dir, paths, (answers, statistics) = reference
    # As the Evaluator writes it when it was given no statistics.
    push_version(tmp_path / "out", model_dir, ({**answers, "train_statistics": None},
                                               statistics))
    (tmp_path / "out" / "serving" / "imagepipe" / str(VERSION) / "assets.extra" / "monitoring"
     / "train_statistics.pb").unlink()
    code, _, err = _monitor(capsys, tmp_path / "out", paths[0].parent)
    assert code == 2 and "has no train statistics" in err
    assert "its Evaluator was given no train statistics" in err and "--version" in err


def test_no_pushed_model_exits_2_naming_the_serving_folder(tmp_path, pushed, capsys):
    _, paths = pushed
    code, _, err = _monitor(capsys, tmp_path / "nothing", paths[0].parent)
    assert code == 2 and "no pushed version" in err and str(tmp_path / "nothing") in err


@pytest.mark.parametrize("flag, value", [("--low-confidence", "2"), ("--format", "nope"),
                                         ("--since", "soon"), ("--accuracy-drop", "-1")])
def test_bad_flags_exit_2_naming_the_flag(pushed, capsys, flag, value):
    output, paths = pushed
    code, _, err = _monitor(capsys, output, paths[0].parent, flag, value)
    assert code == 2 and flag in err


def test_the_live_accuracy_counts_what_was_right_with_its_wilson_interval():
    from monitor.monitor import counted
    assert counted(36, 40) == {"correct": 36, "interval": list(wilson(36, 40))}
    low, high = counted(36, 40)["interval"]
    assert 0.76 < low < 0.9 < high < 0.97  # 0.90 on 40 answers: 0.77 to 0.96
