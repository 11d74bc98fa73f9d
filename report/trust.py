"""summary.json's trust sections: data health, the Evaluator's audit, the model card.

Each reads a file another stage wrote (ingest_report.json, audit.json,
model_card.html) and keeps a compact form: summary.json stays small, and the
files keep the rest. An input that is absent (an older run, a stage that did
not get that far) gives None, never an error.
"""
import json
import os
from typing import Optional

from core.contract import ASSETS_EXTRA, AUDIT_FILE, DATA_HEALTH_KEY, MODEL_CARD_HTML
from core.storage import files

EXAMPLE_GROUPS = 4  # per list: duplicate groups, label conflicts, leaked pairs
PATHS_PER_GROUP = 4
TINY_CLASSES = 20
AUDIT_IMAGES = 12  # suspects and saliency images listed (the report shows them all)
SLICE_VALUES = 20  # per slice feature, the worst first (a --groups feature can have many)
NO_AUDIT = {"robustness": None, "slices": None, "suspects": None, "saliency": None}


def _group(group: dict) -> dict:
    """One duplicate group, conflict or leaked pair, its lists cut to PATHS_PER_GROUP."""
    return {key: value[:PATHS_PER_GROUP] if isinstance(value, list) else value
            for key, value in group.items()}


def _groups(groups) -> list:
    return [_group(g) for g in (groups or [])[:EXAMPLE_GROUPS]]


def data_health_section(ingest_report: dict) -> Optional[dict]:
    """The ingest report's data health, compact: counts, imbalance, leakage, a few examples.

    None when ingestion did not check (an older run, another ExampleGen).
    """
    health = ingest_report.get(DATA_HEALTH_KEY)
    if not health:
        return None
    leakage = health.get("leakage") or {}
    imbalance = dict(health.get("imbalance") or {})
    if imbalance.get("tiny_classes"):
        imbalance["tiny_classes"] = imbalance["tiny_classes"][:TINY_CLASSES]
    return {"images": health.get("images"), "counts": dict(health.get("counts") or {}),
            "imbalance": imbalance or None,
            "leakage": {"count": leakage.get("count", 0), "share": leakage.get("share", 0.0),
                        "pairs": _groups(leakage.get("pairs"))},
            "duplicates": _groups(health.get("duplicates")),
            "label_conflicts": _groups(health.get("label_conflicts")),
            "truncated": bool(health.get("truncated"))}


def read_audit(evaluation_uri: str) -> Optional[dict]:
    """The Evaluator's audit.json in its Evaluation artifact, or None if it wrote none."""
    path = os.path.join(evaluation_uri, AUDIT_FILE)
    return json.loads(files.read_text(path)) if files.exists(path) else None


def audit_sections(audit: Optional[dict]) -> dict:
    """summary.json's `robustness`, `slices`, `suspects` and `saliency` (None when absent).

    Image paths stay relative to the Evaluation artifact ("audit/suspect_0.png"):
    the report copies that folder beside index.html, so they work there as they are.
    """
    if audit is None:
        return dict(NO_AUDIT)
    suspects, saliency = audit.get("suspects"), audit.get("saliency")
    return {"robustness": audit.get("robustness"),
            "slices": _slices(audit.get("slices")),
            "suspects": suspects and {**suspects, "top": suspects.get("top", [])[:AUDIT_IMAGES]},
            "saliency": saliency and {**saliency,
                                      "images": saliency.get("images", [])[:AUDIT_IMAGES]}}


def _slices(slices: Optional[dict]) -> Optional[dict]:
    """The slices with at most SLICE_VALUES values per feature, the least accurate kept."""
    if not slices:
        return slices
    by_feature, cut = {}, []
    for feature, values in (slices.get("by_feature") or {}).items():
        ranked = sorted(values.items(), key=lambda item: (item[1].get("accuracy") is None,
                                                          item[1].get("accuracy")))
        by_feature[feature] = dict(ranked[:SLICE_VALUES])
        if len(ranked) > SLICE_VALUES:
            cut.append(feature)
    return {**slices, "by_feature": by_feature, "cut": cut}


def audit_eval_fields(audit: Optional[dict], evaluation_uri: Optional[str]) -> dict:
    """What the audit adds to summary.json's `eval`: accuracy without leaked images, gates."""
    if audit is None:
        return {"accuracy_without_leaked": None, "leakage_gain": None, "leaked": None,
                "gates": None, "audit_blocked": None, "audit": None}
    leakage = audit.get("leakage") or {}
    return {"accuracy_without_leaked": leakage.get("accuracy_without"),
            "leakage_gain": leakage.get("gain"), "leaked": leakage.get("leaked"),
            "gates": audit.get("gates"), "audit_blocked": audit.get("blocked") or [],
            "audit": {"uri": evaluation_uri, "examples": audit.get("examples"),
                      "accuracy": audit.get("accuracy"), "seconds": audit.get("seconds")}}


def model_card(serving: Optional[str]) -> Optional[str]:
    """The pushed version's model card (assets.extra/model_card.html), if the Pusher wrote one."""
    if not serving:
        return None
    path = os.path.join(serving, ASSETS_EXTRA, MODEL_CARD_HTML)
    return path if files.exists(path) else None
