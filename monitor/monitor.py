"""`imagepipe monitor`: a window of production traffic, scored and measured against the
served model's reference; monitor.json and monitor.html say whether it is healthy.

    imagepipe monitor --output outputs --data requests/ --since 24h

Exit codes (cli/main.py): 0 healthy, 3 alerting, 2 bad input (an empty window, an
unknown --version, a version without a monitoring reference).
"""
import dataclasses
import datetime
import heapq
import json
import os
import time
from typing import List, Optional

from core.contract import BRIGHTNESS_KEY
from core.intervals import wilson
from core.storage import files
from settings.config import PipelineConfig
from core.errors import UsageError
from monitor.records import BadRecord
from monitor.rendering import Drifted
from settings.command_sections import MonitorSettings

MONITOR_JSON, MONITOR_HTML = "monitor.json", "monitor.html"
BAD_LISTED = 20  # bad records named in monitor.json; the rest are counted
DRIFTED_SHOWN = 12  # thumbnails in monitor.html
THUMBNAIL_SIDE = 192  # px kept of each; the page draws them smaller


@dataclasses.dataclass(frozen=True)
class MonitorOptions:
    """`imagepipe monitor`'s own flags (the config gives --output and the drift thresholds)."""

    data: str  # --data: the window
    json: Optional[str] = None  # --json; default <output>/monitoring/<model>/monitor.json
    version: Optional[int] = None  # --version; default the served one
    labels: Optional[str] = None  # --labels
    format: Optional[str] = None  # --format; default sniffed
    since: Optional[str] = None  # --since, e.g. 24h
    report: Optional[str] = None  # --report; default monitor.html beside the JSON
    settings: MonitorSettings = MonitorSettings()


def json_path(config: PipelineConfig, options: MonitorOptions) -> str:
    """Where monitor.json goes."""
    return options.json or os.path.join(config.run.output, "monitoring", config.run.model_name,
                                        MONITOR_JSON)


def report_path(config: PipelineConfig, options: MonitorOptions) -> str:
    """Where monitor.html goes: --report, else beside monitor.json."""
    return options.report or os.path.join(os.path.dirname(json_path(config, options)),
                                          MONITOR_HTML)


class Window:
    """What the monitor keeps of a scored window: the answers, the image features, the
    first bad records, and the inputs furthest from the training brightness."""

    def __init__(self, train_brightness: Optional[float]):
        self.ids, self.predicted, self.confidence, self.features = [], [], [], []
        self.bad, self.bad_count, self._far, self._train = [], 0, [], train_brightness

    def add(self, outcome) -> None:
        """One scoring outcome (scoring.Scored or BadRecord)."""
        if isinstance(outcome, BadRecord):
            self.bad_count += 1
            if len(self.bad) < BAD_LISTED:
                self.bad.append({"id": outcome.id, "reason": outcome.reason})
            return
        self.ids.append(outcome.id)
        self.predicted.append(outcome.predicted)
        self.confidence.append(outcome.confidence)
        if outcome.features is not None:
            self._keep_far(outcome.id, outcome.features)
            outcome.features.image = None  # the pixels are not kept for the whole window
            self.features.append(outcome.features)

    def _keep_far(self, record_id: str, features) -> None:
        if self._train is None:
            return
        distance = abs(features.brightness - self._train)
        if len(self._far) >= DRIFTED_SHOWN and distance <= self._far[0][0]:
            return
        small = features.image.copy()  # a thumbnail's worth, not a photo's pixels
        small.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
        entry = (distance, len(self.ids), Drifted(record_id, features.brightness, small))
        (heapq.heappush if len(self._far) < DRIFTED_SHOWN else heapq.heapreplace)(
            self._far, entry)

    def drifted(self) -> List[Drifted]:
        """The inputs furthest from the training brightness, furthest first."""
        return [entry[2] for entry in sorted(self._far, reverse=True)]

    def summary(self) -> dict:
        """monitor.json's "window"."""
        scored = len(self.ids)
        return {"records": scored + self.bad_count, "scored": scored, "bad": self.bad_count,
                "bad_records": self.bad}


def _check_writable(config: PipelineConfig, options: MonitorOptions) -> None:
    """StorageError (exit 2) before any scoring if monitor.json or the report cannot be
    written."""
    from core.storage.access import check_writable
    check_writable(os.path.dirname(json_path(config, options)),
                   "--json" if options.json else "--output")
    check_writable(os.path.dirname(report_path(config, options)),
                   "--report" if options.report else ("--json" if options.json else "--output"))


def _checked_window(window: Window, options: MonitorOptions) -> None:
    """UsageError (exit 2) for a window with nothing to judge."""
    if window.bad_count == 0 and not window.ids:
        within = f" modified within --since {options.since}" if options.since else ""
        raise UsageError(f"--data {options.data}: the window holds no records{within}")
    if not window.ids:
        first = window.bad[0]
        raise UsageError(f"--data {options.data}: none of its {window.bad_count} records "
                         f"could be scored (first: {first['id']}: {first['reason']})")


def now_iso() -> str:
    """The current UTC time as monitor.json writes it: 2026-11-27T12:00:00Z."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json(result: dict, path: str) -> None:
    """monitor.json, whole or not at all (files.write_text: temporary file and rename, or
    one object on a bucket)."""
    files.write_text(path, json.dumps(result, indent=2) + "\n")


def _scored_window(config: PipelineConfig, options: MonitorOptions, reference) -> tuple:
    """(the window's format, the window read and scored); UsageError if nothing to judge."""
    from monitor import measures, scoring
    from monitor.readers.registry import detect_format, parse_duration, read_window
    since = parse_duration(options.since) if options.since else None
    fmt = detect_format(options.data, options.format, since)
    window = Window(measures.numeric(reference.train, BRIGHTNESS_KEY, "mean"))
    if fmt is not None:
        items = read_window(options.data, fmt, since, reference.labels)
        for outcome in scoring.score_window(items, reference.model_dir,
                                            len(reference.labels), config.images.max_pixels):
            window.add(outcome)
    _checked_window(window, options)
    return fmt, window


def _measures(config: PipelineConfig, options: MonitorOptions, reference, window: Window,
              labelled: Optional[dict]) -> tuple:
    """(monitor.json's "measures", notes on what was not measured)."""
    from monitor import labels as labels_, measures
    drift = dataclasses.asdict(config.drift)  # the span drift check's own thresholds
    thresholds = {feature: drift[feature] for feature in measures.INPUT_FEATURES}
    found = {"input_drift": measures.input_drift(window.features, reference.train, thresholds),
             **measures.prediction_measures(window.predicted, window.confidence,
                                            reference.answers, reference.labels,
                                            options.settings)}
    notes = []
    if not window.features:
        notes.append("input drift not measured: the window's records hold no images")
    if labelled is not None:
        count, correct = labels_.matched(zip(window.ids, window.predicted), labelled,
                                         reference.labels)
        found["accuracy"] = labels_.accuracy(count, correct, reference.answers,
                                             options.settings)
        if found["accuracy"] is None:
            del found["accuracy"]
            notes.append(f"accuracy not measured: {count} record(s) matched --labels "
                         f"{options.labels}, fewer than {options.settings.min_labeled}")
        else:
            found["accuracy"].update(counted(correct, count))
    order = ("input_drift", "prediction_drift", "confidence", "low_confidence_share",
             "accuracy")
    return {key: found[key] for key in order if key in found}, notes


def counted(correct: int, labelled: int) -> dict:
    """The live accuracy's count right and 95% Wilson interval (core/intervals.py): a
    window of 40 labelled answers at 0.90 is anything from 0.77 to 0.96, which the alert's
    point comparison with the eval accuracy does not say."""
    return {"correct": correct, "interval": list(wilson(correct, labelled))}


def run_monitor(config: PipelineConfig, options: MonitorOptions) -> dict:
    """Scores the window, measures it, writes monitor.json and monitor.html; the result.

    Raises:
      UsageError: an empty window, an unknown --version, no monitoring reference, an
        unreadable --labels; nothing is written then.
    """
    from monitor.alerts import alerts
    from monitor.labels import read_labels
    from monitor.reference import load_reference
    from monitor.rendering import monitor_html
    started, stamp = time.monotonic(), now_iso()
    reference = load_reference(config.serving_dir, options.version)
    _check_writable(config, options)  # now that --output is known to hold the model
    labelled = read_labels(options.labels) if options.labels else None
    fmt, window = _scored_window(config, options, reference)
    found, notes = _measures(config, options, reference, window, labelled)
    raised = alerts(found)
    report = report_path(config, options)
    result = {"model": config.run.model_name, "version": reference.version, "data": options.data,
              "format": fmt, "time": stamp, "seconds": round(time.monotonic() - started, 1),
              "window": window.summary(), "measures": found, "alerts": raised,
              "healthy": not raised, "report": report, "notes": notes}
    files.write_text(report, monitor_html(result, window.drifted()))
    write_json(result, json_path(config, options))
    return result
