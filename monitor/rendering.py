"""What a monitor run says: the console's lines and monitor.html, both from monitor.json.

monitor.html is one self-contained file (its thumbnails are inline data URIs), so
it can be mailed or kept beside monitor.json in a bucket; it shows each measure
against its threshold and reference, the alerts, and the inputs whose brightness
is furthest from the training split's mean.
"""
import base64
import io
from typing import List, NamedTuple, Sequence

import numpy as np
from PIL import Image

from components.image_evaluator.audit.render import thumbnail
from monitor.alerts import alerting
from report.page import STYLE
from report.html_sections import esc


class Row(NamedTuple):
    """One measure, as the console and the page show it."""

    name: str
    value: str
    threshold: str
    window: str
    reference: str
    alerting: bool


class Drifted(NamedTuple):
    """An input far from the training brightness, with its thumbnail."""

    id: str
    brightness: float
    image: Image.Image


def _shares(found: dict) -> str:
    return ", ".join(f"{name} {share:.2f}" for name, share in found.items())


def _row(name: str, key: str, measure: dict, window: str, reference: str,
         rule: str = "over") -> Row:
    """One measure's row; one that could not be computed reads "not measured" and why."""
    value = (f"{measure['value']:.4f}" if measure.get("value") is not None
             else f"not measured ({measure.get('not_measured') or 'no value'})")
    return Row(name, value, f"{rule} {measure['threshold']:g}", window, reference,
               alerting(key, measure))


def measure_rows(measures: dict) -> List[Row]:
    """Every measure of monitor.json's "measures", input drift first."""
    rows = [_row(f"input drift: {feature}", "input_drift", m, m["window"], m["reference"])
            for feature, m in measures.get("input_drift", {}).items()]
    if measures.get("prediction_drift"):
        m = measures["prediction_drift"]
        rows.append(_row("prediction drift", "prediction_drift", m, _shares(m["window"]),
                         _shares(m["reference"])))
    if measures.get("confidence"):
        m = measures["confidence"]
        rows.append(_row("confidence drift", "confidence", m, f"mean {m['window_mean']}",
                         f"mean {m['reference_mean']}"))
    if measures.get("low_confidence_share"):
        m = measures["low_confidence_share"]
        rows.append(_row("low-confidence share", "low_confidence_share", m, "",
                         "-" if m["reference"] is None else f"{m['reference']:.4f}",
                         "on a rise over"))
    if measures.get("accuracy"):
        m = measures["accuracy"]
        rows.append(_row("accuracy", "accuracy", m, _labelled(m), f"{m['reference']:.4f}",
                         "on a drop over"))
    return rows


def _labelled(accuracy: dict) -> str:
    """"40 labelled, 95% CI 0.769-0.961": the live accuracy's sample (monitor.json before
    intervals: the count only)."""
    interval = accuracy.get("interval")
    return f"{accuracy['labeled']} labelled" + (
        f", 95% CI {interval[0]:.3f}-{interval[1]:.3f}" if interval else "")


def console_lines(result: dict, json_file: str) -> List[str]:
    """What `imagepipe monitor` prints: what was scored, each measure, the alerts, the files."""
    window = result["window"]
    lines = [f"window    {result['data']} ({result['format']}): {window['records']:,} records, "
             f"{window['scored']:,} scored, {window['bad']:,} bad; model {result['model']} "
             f"version {result['version']}"]
    for row in measure_rows(result["measures"]):
        window_part = f"window {row.window}, " if row.window else ""
        lines.append(f"  {row.name:<26} {row.value}  (alerts {row.threshold}; {window_part}"
                     f"reference {row.reference or '-'})" + ("  ALERT" if row.alerting else ""))
    lines += [f"  note: {note}" for note in result.get("notes", [])]
    verdict = "healthy" if result["healthy"] else f"ALERTING: {len(result['alerts'])} alert(s)"
    lines.append(f"verdict   {verdict}")
    lines.append(f"written   {json_file}, {result['report']}")
    return lines


def data_uri(image: Image.Image) -> str:
    """A PNG thumbnail of a decoded image, inline."""
    buffer = io.BytesIO()
    Image.fromarray(thumbnail(np.asarray(image.convert("RGB"), dtype=np.float32))).save(
        buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# A measure's value and its verdict stay on one line in a narrow window.
_NO_WRAP = ".grid td:nth-child(2), .grid td:nth-child(6) {white-space: nowrap}"


def _table(header: Sequence[str], rows: List[Sequence[str]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    return f'<table class="grid">{thead}<tbody>{body}</tbody></table>'


def _figures(drifted: Sequence[Drifted], train_mean: str) -> str:
    if not drifted:
        return ""
    tiles = "".join(f'<figure><img src="{data_uri(d.image)}" alt=""><figcaption>'
                    f"{esc(d.id)}<br>brightness {d.brightness:.0f}</figcaption></figure>"
                    for d in drifted)
    return (f"<h2>Inputs furthest from the training brightness ({esc(train_mean)})</h2>"
            f'<div class="tiles">{tiles}</div>')


def monitor_html(result: dict, drifted: Sequence[Drifted] = ()) -> str:
    """The whole page."""
    status = ("ok", "Healthy") if result["healthy"] else (
        "fail", f"Alerting: {len(result['alerts'])} alert(s)")
    window = result["window"]
    header = [["model", f"{result['model']} version {result['version']}"],
              ["window", f"{result['data']} ({result['format']})"],
              ["records", f"{window['records']} read, {window['scored']} scored, "
                          f"{window['bad']} bad"], ["time", result["time"]]]
    measures = _table(["measure", "value", "threshold", "window", "reference", ""],
                      [[*row[:5], "ALERT" if row.alerting else "ok"]
                       for row in measure_rows(result["measures"])])
    alerts = "".join(f"<li>{esc(a['kind'])}: {esc(a['measure'])} {a['value']} (threshold "
                     f"{a['threshold']})</li>" for a in result["alerts"])
    bad = _table(["record", "reason"], [[b["id"], b["reason"]] for b in window["bad_records"]])
    brightness = result["measures"].get("input_drift", {}).get("brightness", {})
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>imagepipe monitor: "
            f"{esc(result['model'])}</title><style>{STYLE}{_NO_WRAP}</style></head><body>"
            f"<h1>imagepipe monitor</h1><p class='overall verdict {status[0]}'>{status[1]}</p>"
            f"{_table(['', ''], header)}<h2>Measures</h2>{measures}"
            + "".join(f"<p class='why'>{esc(n)}</p>" for n in result.get("notes", []))
            + (f"<h2>Alerts</h2><ul>{alerts}</ul>" if alerts else "")
            + (f"<h2>Bad records (first {len(window['bad_records'])})</h2>{bad}"
               if window["bad_records"] else "")
            + _figures(drifted, brightness.get("reference", "")) + "</body></html>")
