"""What continuous training adds to a push: the spans it records (the drift gate is
components/common/drift.py's, shared with the Evaluator).

Plain functions on the Examples' ingest report (components/common/contract.py) and
its `spans` custom property; no TFX. The drift verdict is ImageExampleGen's
(components/common/drift.py): the newest span against the one before it.
"""
from typing import List, Optional


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
