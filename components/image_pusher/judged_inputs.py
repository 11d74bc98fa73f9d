"""The inputs a pipeline last reached a decision on, kept beside the versions it pushes.

Why a record in the push destination: a scheduled run on Kubeflow or Vertex
cannot ask the cluster's ML Metadata whether its data is new, and KFP's cache
misses every step after an ingestion that made a new artifact. ImageExampleGen
compares its inputs' digest (the window of spans, its settings and the
compiled pipeline's digest) with this record, and the rest of the DAG runs
only when they differ (a TFX `Cond`, see pipeline/dag.py).

The Pusher writes the record whenever it runs, pushed or not: a drifted span,
or a model under the threshold, is judged once, not retrained every week until
new data arrives. A run that fails before the Pusher writes nothing, so the
next one tries again. One file per serving root, an entry per model, replaced
whole (files.write_text), as served.json is.
"""
import datetime
import json
import os
from typing import Dict, Optional

from core.storage import files

JUDGED_FILE = "judged.json"  # in the serving root, beside served.json and models.config


def _path(serving_dir: str) -> str:
    return os.path.join(os.path.dirname(str(serving_dir).rstrip("/")), JUDGED_FILE)


def _read(path: str) -> Dict[str, dict]:
    if not files.exists(path):
        return {}
    try:
        return json.loads(files.read_text(path))
    except ValueError:  # unreadable: treat as never judged, so the run goes ahead
        return {}


def last_judged(serving_dir: str) -> Optional[dict]:
    """The model's last record ({"inputs", "spans", "decision", "version", "at"}), or None."""
    name = os.path.basename(str(serving_dir).rstrip("/"))
    return _read(_path(serving_dir)).get(name)


def record_judged(serving_dir: str, inputs: str, spans: Optional[str], decision: str,
                  version: Optional[int]) -> None:
    """Records that the inputs with digest `inputs` were judged: `decision` says how."""
    path = _path(serving_dir)
    record = _read(path)
    record[os.path.basename(str(serving_dir).rstrip("/"))] = {
        "inputs": inputs, "spans": spans, "decision": decision, "version": version,
        "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    files.write_text(path, json.dumps(record, indent=2) + "\n")


def is_new(serving_dir: str, inputs: str) -> tuple:
    """(whether `inputs` differ from the last judged ones, the sentence that says so)."""
    last = last_judged(serving_dir)
    if last is None:
        return True, "no earlier run reached a decision"
    if last.get("inputs") != inputs:
        return True, f"the inputs changed since the run of {last.get('at')}"
    spans = f"spans {last['spans']}" if last.get("spans") else "the same data"
    return False, (f"no new data: {spans} and the same settings were judged at "
                   f"{last.get('at')} ({last.get('decision')})")
