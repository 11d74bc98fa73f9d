"""The inputs a pipeline last reached a verdict on, kept beside the versions it pushes.

Why a record in the push destination: a scheduled run on Kubeflow or Vertex
cannot ask the cluster's ML Metadata whether its data is new, and KFP's cache
misses every step after an ingestion that made a new artifact. ImageExampleGen
compares its inputs' digest (the window of spans, its settings and the
compiled pipeline's digest) with this record, and the rest of the DAG runs
only when they differ (a TFX `Cond`, see pipeline/dag.py) or when the last
try on them reached no verdict.

Only a verdict about the model or the data is final (`judged`): the model was
pushed, the Evaluator or the serving check refused the model (`model`), or
the data drifted or brings no span newer than a rolled-back model's (`data`).
A failure of the infrastructure is not: a serving check that timed out or
crashed (components/serving_validator/) records `failed` with its reason and
fails its step; any other failed or killed step leaves the `started` entry
ImageExampleGen wrote. Either way the next run on the same inputs tries
again, and says why. After MAX_FAILURES such tries the next run records the
inputs as judged (verdict `infrastructure`), prints ALERT_PREFIX for an
alert to match, and fails: a model that breaks its serving check every time
is not retrained every week forever.

One file per serving root, an entry per model; every change is conditional
(core/storage/shared_json.py), so two models, or two overlapping runs, sharing a
serving root never drop each other's entries.
"""
import datetime
import os
from typing import Dict, Optional, Tuple

from core.storage import shared_json

JUDGED_FILE = "judged.json"  # in the serving root, beside served.json and models.config
# The verdicts: the first three are final, `infrastructure` only once the tries are spent.
PUSHED, MODEL, DATA, INFRASTRUCTURE = "pushed", "model", "data", "infrastructure"
# States of an entry: a verdict was reached; a try is under way (or died without a
# word); a try failed on the infrastructure and said why.
JUDGED, STARTED, FAILED = "judged", "started", "failed"
MAX_FAILURES = 2  # failed tries on the same inputs before the next run gives up
# The start of the line a run that gives up prints (and its error message): alert on it.
ALERT_PREFIX = "imagepipe alert: gave up retrying"


class GaveUp(RuntimeError):
    """The inputs failed MAX_FAILURES times on the infrastructure; now recorded as judged."""


def _path(serving_dir: str) -> str:
    return os.path.join(os.path.dirname(str(serving_dir).rstrip("/")), JUDGED_FILE)


def _name(serving_dir: str) -> str:
    return os.path.basename(str(serving_dir).rstrip("/"))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _read(path: str) -> Dict[str, dict]:
    # Not JSON: treated as never judged, so the run goes ahead (and rewrites it).
    return shared_json.read_json(path, {}, replace_unreadable=True) or {}


def last_judged(serving_dir: str) -> Optional[dict]:
    """The model's entry: {"inputs", "spans", "state", "verdict", "reason", "decision",
    "version", "failures", "at"}, or None."""
    return _read(_path(serving_dir)).get(_name(serving_dir))


def _set(serving_dir: str, entry: dict) -> None:
    """Replaces the model's entry, conditionally (no other model's entry is lost)."""
    change = shared_json.replaced_entry(_name(serving_dir), entry)
    shared_json.update_json(_path(serving_dir), change, {}, replace_unreadable=True)


def record_judged(serving_dir: str, inputs: str, spans: Optional[str], verdict: str,
                  reason: str, version: Optional[int]) -> None:
    """Records the final verdict on the inputs with digest `inputs`: `verdict` is PUSHED,
    MODEL, DATA (or INFRASTRUCTURE, when the tries are spent) and `reason` says why."""
    decision = f"pushed version {version}" if verdict == PUSHED else f"not pushed: {reason}"
    _set(serving_dir, {"inputs": inputs, "spans": spans, "state": JUDGED, "verdict": verdict,
                       "reason": reason, "decision": decision, "version": version,
                       "failures": _failures(serving_dir, inputs), "at": _now()})


def record_failure(serving_dir: str, inputs: str, spans: Optional[str], reason: str) -> int:
    """Records a try on `inputs` that failed on the infrastructure (not judged); returns the
    failed tries so far."""
    failures = _failures(serving_dir, inputs) + 1
    _set(serving_dir, {"inputs": inputs, "spans": spans, "state": FAILED,
                       "verdict": INFRASTRUCTURE, "reason": reason, "decision": None,
                       "version": None, "failures": failures, "at": _now()})
    return failures


def _failures(serving_dir: str, inputs: str) -> int:
    """Failed tries recorded on `inputs` (a `started` entry's try is not counted yet)."""
    last = last_judged(serving_dir)
    if not last or last.get("inputs") != inputs:
        return 0
    return int(last.get("failures") or 0)


def _spent(last: dict) -> Tuple[int, str]:
    """(failed tries on the entry's inputs, why the last one failed), counting a `started`
    try that never recorded an end: a step failed or was stopped."""
    failures = int(last.get("failures") or 0)
    if last.get("state") == STARTED:
        return failures + 1, (f"the run started at {last.get('at')} stopped before a "
                              "verdict (a step failed or was stopped: its log says which)")
    return failures, f"{last.get('reason')} (at {last.get('at')})"


def begin(serving_dir: str, inputs: str, spans: Optional[str]) -> Tuple[bool, str]:
    """Decides whether a run on `inputs` goes ahead, records that it started, and says why.

    Returns (go ahead, the sentence). Raises GaveUp once MAX_FAILURES tries on these
    inputs failed: the inputs are then recorded as judged, so later runs skip them.
    """
    last = last_judged(serving_dir)
    if last is None:
        new, reason, failures = True, "no earlier run reached a verdict", 0
    elif last.get("inputs") != inputs:
        new, reason, failures = True, f"the inputs changed since the run of {last.get('at')}", 0
    elif last.get("state", JUDGED) == JUDGED:
        return False, _judged_sentence(last)
    else:
        failures, why = _spent(last)
        if failures >= MAX_FAILURES:
            _give_up(serving_dir, inputs, spans, failures, why)
        new, reason = True, (f"retrying after {failures} failed "
                             f"{'try' if failures == 1 else 'tries'} on these inputs "
                             f"(at most {MAX_FAILURES}): {why}")
    _set(serving_dir, {"inputs": inputs, "spans": spans, "state": STARTED, "verdict": None,
                       "reason": None, "decision": None, "version": None,
                       "failures": failures, "at": _now()})
    return new, reason


def _give_up(serving_dir: str, inputs: str, spans: Optional[str], failures: int,
             why: str) -> None:
    reason = (f"gave up after {failures} failed tries on the infrastructure; the last: {why}")
    _set(serving_dir, {"inputs": inputs, "spans": spans, "state": JUDGED,
                       "verdict": INFRASTRUCTURE, "reason": reason,
                       "decision": f"not pushed: {reason}", "version": None,
                       "failures": failures, "at": _now()})
    line = (f"{ALERT_PREFIX} model={_name(serving_dir)} inputs={inputs[:12]} "
            f"failures={failures}: {why}; these inputs are now judged, and later runs "
            "skip them until new data or settings arrive")
    print(line, flush=True)
    raise GaveUp(line)


def _judged_sentence(last: dict) -> str:
    spans = f"spans {last['spans']}" if last.get("spans") else "the same data"
    verdict = last.get("verdict") or "judged"
    reason = last.get("reason") or last.get("decision")
    return (f"no new data: {spans} and the same settings were judged at {last.get('at')} "
            f"({verdict}: {reason})")


def is_new(serving_dir: str, inputs: str) -> Tuple[bool, str]:
    """(whether a run on `inputs` would go ahead, the sentence), recording nothing."""
    last = last_judged(serving_dir)
    if last is None or last.get("inputs") != inputs:
        return True, "no earlier run reached a verdict on these inputs"
    if last.get("state", JUDGED) == JUDGED:
        return False, _judged_sentence(last)
    failures, why = _spent(last)
    return True, f"{failures} failed tries on these inputs: {why}"
