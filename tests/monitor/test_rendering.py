"""monitor.html and the console lines, rendered from a monitor result."""
from PIL import Image

from monitor.rendering import Drifted, console_lines, measure_rows, monitor_html

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


def test_the_live_accuracy_shows_its_count_and_95_percent_interval():
    measures = {"accuracy": {**RESULT["measures"]["accuracy"], "correct": 36,
                             "interval": [0.7696, 0.9604]}}
    assert measure_rows(measures)[0].window == "40 labelled, 95% CI 0.770-0.960"
    page = monitor_html({**RESULT, "measures": measures})
    assert "40 labelled, 95% CI 0.770-0.960" in page
    line = [line for line in console_lines({**RESULT, "measures": measures}, "/m.json")
            if "accuracy" in line][0]
    assert "window 40 labelled, 95% CI 0.770-0.960, reference 0.9200" in line
    assert measure_rows(RESULT["measures"])[-1].window == "40 labelled"  # an older result


def test_the_console_says_what_was_scored_each_measure_and_where_it_went():
    lines = console_lines(RESULT, "/out/monitor.json")
    assert lines[0].startswith("window    /logs/<today> (images): 3 records, 2 scored, 1 bad")
    assert any("input drift: brightness" in line and line.endswith("ALERT") for line in lines)
    assert "verdict   ALERTING: 2 alert(s)" in lines
    assert lines[-1] == "written   /out/monitor.json, /out/monitor.html"


def test_a_measure_that_could_not_be_computed_reads_not_measured_never_zero():
    measures = {"prediction_drift": {"value": None, "threshold": 0.15, "window": {},
                                     "reference": {}, "not_measured":
                                     "TFDV could not compare the predicted classes"},
                "low_confidence_share": {"value": None, "threshold": 0.1, "reference": None,
                                         "not_measured": "no answer has a confidence"}}
    rows = measure_rows(measures)
    assert [r.value for r in rows] == [
        "not measured (TFDV could not compare the predicted classes)",
        "not measured (no answer has a confidence)"]
    assert not any(r.alerting for r in rows)
    page = monitor_html({**RESULT, "measures": measures, "alerts": []})
    assert "not measured (no answer has a confidence)" in page and "0.0000" not in page
