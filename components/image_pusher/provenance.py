"""What a release stage knows of the data, and what a version's provenance records:
the spans, the Evaluator's accuracy, a drift the push went ahead despite (the drift
gate is components/drift_validator/verdict.py's, shared with the Evaluator), and the pushed
version the model warm-started from.

Plain functions on the Examples' ingest report (core/contract.py) and
its `spans` custom property; no TFX. The drift verdict is the one the Evaluator judged
by, recorded on its blessing (contract.DRIFT_PROPERTY): the DistributionValidator's
(components/drift_validator/), the newest span against the one before it.
"""
import dataclasses
import json
import os
from typing import List, Optional

from core.contract import (ACCURACY_PROPERTY, DRIFT_PROPERTY, SPANS_PROPERTY,
                           ingest_report)
from components.drift_validator.verdict import drift_gate
from core.storage import files
from components.image_pusher.versions import provenance, pushed_version_of

# The warm-start folder of every Model artifact, beside Format-Serving and never pushed:
# the Trainer writes the weights and the description that decides whether they fit
# (modules/training/warm_start.py); PushedWarmStart copies a pushed version's, adding
# ORIGIN_FILE ({"version", "source_uri", "reason"}), which the next Trainer reads.
WARM_START_DIR = "warm_start"
WEIGHTS_FILE, INFO_FILE, ORIGIN_FILE = "weights.npz", "model.json", "origin.json"
# The Trainer's ModelRun output holds FIT_STATS_FILE (modules/epoch_progress.py), whose
# "warm_start" entry says what the model started from.
FIT_STATS_FILE, MODEL_RUN_KEY, MODEL_KEY = "fit_stats.json", "model_run", "model"
# What TFX's Evaluator sets on every ModelBlessing: the URI of the model it judged
# (tfx/components/evaluator/constants.py), the Model the Pusher pushes with it.
CURRENT_MODEL = "current_model"


def spans_of(spans_property: Optional[str], report: dict) -> List[int]:
    """The trained spans: the artifact's `spans` ("1,2"), else the report's "spans" (ints,
    or ImageExampleGen's entries {"span": n, ...}); [] for data without spans."""
    if spans_property:
        return [int(s) for s in spans_property.split(",") if s.strip()]
    return [int(s["span"] if isinstance(s, dict) else s) for s in report.get("spans") or []]


def push_record(spans_property: Optional[str], report: dict, accuracy: Optional[float],
                drift_overridden: Optional[str]) -> dict:
    """The fields the Pusher adds to a version's provenance (components/image_pusher/versions.py):
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
    drift: Optional[dict] = None  # the drift verdict on the blessing; None: not judged


def release_of(examples, blessing, allow_drift: bool, base: Optional[str] = None) -> Release:
    """The ingest report of `examples` (an Examples artifact, or None), the drift gate on
    the verdict the Evaluator recorded on `blessing`, and the provenance record with the
    Evaluator's accuracy.

    With `base`, the push destination (the Pusher's), the record also says which pushed
    version the blessed model warm-started from: `warm_started_from`."""
    report = ingest_report(examples.uri if examples else None)
    drift = drift_of(blessing)
    blocked, overridden = drift_gate(drift, allow_drift)
    record = push_record(examples and examples.get_custom_property(SPANS_PROPERTY), report,
                         blessing.get_custom_property(ACCURACY_PROPERTY), overridden)
    if base is not None:
        record["warm_started_from"] = warm_started_from(
            blessing.get_custom_property(CURRENT_MODEL) or None, base)
    return Release(report, blocked, record, drift)


def drift_of(blessing) -> Optional[dict]:
    """The drift verdict the Evaluator recorded on `blessing`, or None (data without spans,
    or an Evaluator not given one)."""
    recorded = blessing.get_custom_property(DRIFT_PROPERTY) if blessing is not None else None
    return json.loads(recorded) if recorded else None


def fit_stats_path(model_uri: str) -> str:
    """The fit_stats.json of the Trainer whose Model artifact is `model_uri`, in its
    ModelRun output: `<Trainer>/model_run/<execution>` beside `<Trainer>/model/<execution>`
    on local runs; `<task>/model_run` beside `<task>/model` on KFP and Vertex, which give
    each output one URI."""
    parent, name = os.path.split(str(model_uri).rstrip("/"))  # normpath breaks gs://
    if name == MODEL_KEY:
        return os.path.join(parent, MODEL_RUN_KEY, FIT_STATS_FILE)
    return os.path.join(os.path.dirname(parent), MODEL_RUN_KEY, name, FIT_STATS_FILE)


def warm_started_from(model_uri: Optional[str], base: str) -> Optional[dict]:
    """The pushed version the model at `model_uri` started from: {"version": V, "model": the
    Model artifact V was pushed from}; "version" is None for a model never pushed to `base`.
    None when it trained from scratch, or its Trainer recorded nothing (an older run).

    The Trainer records the version when PushedWarmStart's copy named it (KFP, Vertex);
    a local run's base model is found among the versions by its URI."""
    warm = _warm_start_entry(model_uri) if model_uri else None
    if not warm or not warm.get("from"):
        return None
    if warm.get("version") is not None:
        record = provenance(os.path.join(str(base), str(warm["version"]))) or {}
        return {"version": int(warm["version"]),
                "model": record.get("source_uri") or warm["from"]}
    return {"version": pushed_version_of(base, warm["from"]), "model": warm["from"]}


def _warm_start_entry(model_uri: str) -> Optional[dict]:
    """fit_stats' `warm_start` entry, or None; an unreadable file is no reason to stop a
    push, only to record nothing."""
    path = fit_stats_path(model_uri)
    try:
        stats = json.loads(files.read_text(path)) if files.exists(path) else None
    except (OSError, ValueError):
        return None
    return stats.get("warm_start") if isinstance(stats, dict) else None
