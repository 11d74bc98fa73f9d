"""monitor.html and the console lines, rendered from a monitor result."""
from PIL import Image

from pipeline.monitoring.rendering import Drifted, console_lines, measure_rows, monitor_html

RESULT = {
    "model": "imagepipe", "version": 17, "data": "/logs/<today>", "format": "images",
    "time": "2026-11-27T12:00:00Z", "seconds": 3.2,
    "window": {"records": 3, "scored": 2, "bad": 1,
               "bad_records": [{"id": "x.png", "reason": "cannot decode"}]},
    "measures": {
        "input_drift": {"brightness": {"value": 0.8, "threshold": 0.1, "window": "mean 222",
                                       "reference": "mean 33"}},
        "prediction_drift": {"value": 0.1, "threshold": 0.15, "window": {"3": 0.5, "4": 0.5},
                             "reference": {"3": 0.4, "4": 0.6}},
        "confidence": {"value": 0.05, "threshold": 0.1, "window_mean": 0.9,
                       "reference_mean": 0.95},
        "low_confidence_share": {"value": 0.25, "threshold": 0.1, "reference": 0.05},
        "accuracy": {"value": 0.9, "threshold": 0.05, "reference": 0.92, "labeled": 40}},
    "alerts": [{"kind": "input_drift", "measure": "brightness", "value": 0.8, "threshold": 0.1},
               {"kind": "confidence", "measure": "low_confidence_share", "value": 0.25,
                "threshold": 0.1, "reference": 0.05}],
    "healthy": False, "report": "/out/monitor.html", "notes": ["a note"]}


def test_each_measure_is_a_row_marked_when_it_alerts():
    rows = measure_rows(RESULT["measures"])
    assert [(r.name, r.alerting) for r in rows] == [
        ("input drift: brightness", True), ("prediction drift", False),
        ("confidence drift", False), ("low-confidence share", True), ("accuracy", False)]
    assert rows[0].window == "mean 222" and rows[1].window == "3 0.50, 4 0.50"


def test_the_page_is_self_contained_with_alerts_bad_records_and_thumbnails():
    image = Image.new("RGB", (20, 10), (250, 250, 250))
    page = monitor_html(RESULT, [Drifted("bright.png", 250.0, image)])
    assert page.startswith("<!doctype html>") and "Alerting: 2 alert(s)" in page
    assert "/logs/&lt;today&gt;" in page  # escaped
    assert "x.png" in page and "cannot decode" in page and "a note" in page
    assert page.count('src="data:image/png;base64,') == 1 and "bright.png" in page
    assert 'src="http' not in page and "<link" not in page


def test_the_console_says_what_was_scored_each_measure_and_where_it_went():
    lines = console_lines(RESULT, "/out/monitor.json")
    assert lines[0].startswith("window    /logs/<today> (images): 3 records, 2 scored, 1 bad")
    assert any("input drift: brightness" in line and line.endswith("ALERT") for line in lines)
    assert "verdict   ALERTING: 2 alert(s)" in lines
    assert lines[-1] == "written   /out/monitor.json, /out/monitor.html"
