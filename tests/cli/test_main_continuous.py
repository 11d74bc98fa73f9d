"""`imagepipe versions` and `imagepipe rollback`: output, and exit 2 for what cannot be."""
import json
import os

import pytest

from components.image_pusher.versions import publish
from cli import main as cli
from tests.support.cli import imagepipe
from tests.support.models import stand_in_model


def _pushed(tmp_path, *numbers):
    """An output with versions `numbers` of the model `imagepipe`."""
    model = stand_in_model(tmp_path / "trained")
    out = tmp_path / "out"
    for number in numbers:
        publish(str(model), str(out / "serving" / "imagepipe"), number,
                source_uri=f"uri://{number}", record={"spans": [number], "accuracy": 0.5})
    return str(out)


def test_versions_prints_the_table_and_writes_json(tmp_path, capsys):
    out = _pushed(tmp_path, 1, 2)
    assert cli.main(["versions", "--output", out, "--json", str(tmp_path / "v.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].split()[0] == "2" and lines[-1].endswith("served")
    listing = json.loads((tmp_path / "v.json").read_text())
    assert [row["version"] for row in listing["versions"]] == [1, 2]


def test_rollback_pins_the_predecessor_and_versions_shows_it(tmp_path, capsys):
    out = _pushed(tmp_path, 1, 2)
    assert cli.main(["rollback", "--output", out]) == 0
    assert "serving version 1 (was 2)" in capsys.readouterr().out
    assert cli.main(["versions", "--output", out]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["1"].endswith("served (pinned)") and rows["2"].endswith("rolled back")


@pytest.mark.parametrize("args, words", [
    (["--to", "7"], "--to 7: no such version"),
    (["--to", "2"], "--to 2: version 2 is already the one served"),
    (["--model-name", "other"], "no versions pushed to"),
])
def test_rollback_refusals_exit_2_naming_the_flag(tmp_path, capsys, args, words):
    out = _pushed(tmp_path, 1, 2)
    assert cli.main(["rollback", "--output", out, *args]) == 2
    assert words in capsys.readouterr().err


def test_rollback_waits_for_no_run_it_refuses_while_one_holds_the_output(tmp_path, capsys):
    from pipeline.local.lock import output_lock
    out = _pushed(tmp_path, 1, 2)
    with output_lock(out):
        assert cli.main(["rollback", "--output", out]) == 2
    assert "another imagepipe run is using it" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(out, "serving", "served.json"))


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_the_console_script_exits_2_without_a_traceback(tmp_path):
    result = imagepipe("versions", "--output", tmp_path / "none", timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--output" in result.stderr and "no versions pushed" in result.stderr


@pytest.mark.parametrize("span, words", [
    ("5", "--span 5: --data"),  # no such span
    ("2", "--span 2: span 2"),  # still arriving: no _SUCCESS, files changed just now
])
def test_a_run_told_which_span_to_expect_fails_before_anything_runs(tmp_path, capsys,
                                                                    make_image, span, words):
    for number in (1, 2):
        for label in ("a", "b"):
            for i in range(2):
                make_image(tmp_path / f"span-{number}" / label / f"{i}.png", size=(8, 8))
    (tmp_path / "span-1" / "_SUCCESS").touch()
    assert cli.main(["run", "--data", str(tmp_path / "span-{SPAN}"), "--span", span,
                     "--output", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "out" / "summary.json").exists()
