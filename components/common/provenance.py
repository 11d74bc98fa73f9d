"""What a release stage knows of the data, and what a version's provenance records:
the spans, the Evaluator's accuracy, a drift the push went ahead despite (the drift
gate is components/common/drift.py's, shared with the Evaluator).

Plain functions on the Examples' ingest report (components/common/contract.py) and
its `spans` custom property; no TFX. The drift verdict is ImageExampleGen's
(components/common/drift.py): the newest span against the one before it.
"""
import dataclasses
from typing import List, Optional

from components.common.contract import ACCURACY_PROPERTY, SPANS_PROPERTY, ingest_report
from components.common.drift import drift_gate


def spans_of(spans_property: Optional[str], report: dict) -> List[int]:
    """The trained spans: the artifact's `spans` ("1,2"), else the report's "spans" (ints,
    or ImageExampleGen's entries {"span": n, ...}); [] for data without spans."""
    if spans_property:
        return [int(s) for s in spans_property.split(",") if s.strip()]
    return [int(s["span"] if isinstance(s, dict) else s) for s in report.get("spans") or []]


def push_record(spans_property: Optional[str], report: dict, accuracy: Optional[float],
                drift_overridden: Optional[str]) -> dict:
    """The fields the Pusher adds to a version's provenance (components/common/versions.py):
    spans, the Evaluator's accuracy (None if it recorded none) and, when
    --allow-drift let a drifted span through, drift_overridden."""
    record = {"spans": spans_of(spans_property, report),
              "accuracy": None if accuracy is None else float(accuracy)}
    if drift_overridden:
        record["drift_overridden"] = drift_overridden
    return record


@dataclasses.dataclass(frozen=True)
class Release:
    """What a release stage knows of the data a model was trained on."""

    report: dict  # the ingest report ({} without one)
    blocked: Optional[str]  # why the drift gate refuses the push, or None
    record: dict  # the provenance fields: spans, accuracy, drift_overridden


def release_of(examples, blessing, allow_drift: bool) -> Release:
    """The ingest report of `examples` (an Examples artifact, or None), the drift gate's
    verdict, and the provenance record with the Evaluator's accuracy from `blessing`."""
    report = ingest_report(examples.uri if examples else None)
    blocked, overridden = drift_gate(report, allow_drift)
    record = push_record(examples and examples.get_custom_property(SPANS_PROPERTY), report,
                         blessing.get_custom_property(ACCURACY_PROPERTY), overridden)
    return Release(report, blocked, record)
