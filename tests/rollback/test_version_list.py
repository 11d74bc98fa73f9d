"""`imagepipe versions`: each pushed version, what it was trained on, and which is served."""
import json

import pytest

from components.image_pusher.versions import ServingState, write_serving_state
from rollback.version_list import format_versions, list_versions, write_json
from core.errors import UsageError
from tests.support.models import stand_in_model


def test_each_version_with_its_spans_accuracy_date_and_the_served_one(pushed):
    listing = list_versions(pushed.config)
    rows = {row["version"]: row for row in listing["versions"]}
    assert list(rows) == [100, 200, 300] and listing["served"] == 300
    assert rows[100]["spans"] == [1] and rows[300]["accuracy"] == pytest.approx(0.92)
    assert rows[300]["served"] and not rows[200]["served"] and listing["pinned"] is None
    assert rows[100]["pushed_at"].endswith("Z") and "T" in rows[100]["pushed_at"]
    assert rows[300]["tflite_current"] and not rows[200]["tflite"]
    assert rows[100]["source_uri"] == pushed.source_uris[100]


def test_the_table_marks_the_pinned_and_the_rolled_back_versions(pushed):
    write_serving_state(pushed.config.serving_dir, ServingState(pinned=200, rolled_back=(300,)))
    lines = format_versions(list_versions(pushed.config)).splitlines()
    assert lines[0].startswith("digits in ") and "accuracy" in lines[1]
    by_version = {line.split()[0]: line for line in lines[2:]}
    assert by_version["200"].endswith("served (pinned)")
    assert by_version["300"].endswith("rolled back")
    assert "0.9000" in by_version["100"] and by_version["100"].split()[2] == "1"
    assert "current" not in by_version["200"]  # no TFLite of its own


def test_json_has_the_same_rows(pushed, tmp_path):
    listing = list_versions(pushed.config)
    write_json(listing, str(tmp_path / "v.json"))
    assert json.loads((tmp_path / "v.json").read_text()) == listing


def test_an_output_without_versions_is_refused_naming_the_flag(tmp_path):
    from settings.config import PipelineConfig
    with pytest.raises(UsageError, match="--output .*no versions pushed"):
        list_versions(PipelineConfig.from_values(output=str(tmp_path)))


def test_the_warm_from_column_names_the_version_a_push_started_from(pushed, tmp_path):
    from components.image_pusher.versions import publish
    config = pushed.config
    model = stand_in_model(tmp_path / "warm-started")
    publish(str(model), config.serving_dir, 400, source_uri=f"{config.pipeline_root}/m/400",
            record={"spans": [4], "accuracy": 0.95, "warm_started_from": {
                "version": 300, "model": pushed.source_uris[300]}})
    listing = list_versions(config)
    rows = {row["version"]: row for row in listing["versions"]}
    assert rows[400]["warm_started_from"]["version"] == 300
    assert rows[100]["warm_started_from"] is None  # pushed before it was recorded
    lines = format_versions(listing).splitlines()
    assert "warm from" in lines[1]
    by_version = {line.split()[0]: line.split() for line in lines[2:]}
    assert by_version["400"][5] == "300" and by_version["300"][5] == "-"
