"""`imagepipe versions`: every pushed version of a model, which one is served, which were
rolled back.

    imagepipe versions --output outputs [--json versions.json]

Reads only the push destination (each version's provenance and served.json:
components/image_pusher/versions.py), so it works for a gs:// output and for versions a
Kubeflow run pushed: there --output is the compile's --pipeline-root.
"""
import datetime
import json
import os
from typing import List, Optional

from core.storage import files
from core.storage.access import check_readable
from components.image_pusher.versions import (
    TFLITE_COMMIT_FILE, complete_versions, is_complete, provenance, read_pointer,
    served_version, serving_state, versions)
from settings.config import PipelineConfig
from core.errors import UsageError


def _iso(pushed_at: Optional[float]) -> Optional[str]:
    if pushed_at is None:
        return None
    return datetime.datetime.fromtimestamp(pushed_at, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def version_rows(serving_dir: str, tflite_dir: str) -> List[dict]:
    """One row per version folder, oldest first: version, pushed_at (ISO 8601, UTC), spans,
    accuracy, source_uri, drift_overridden, warm_started_from ({"version", "model"} or
    None), complete, served, pinned, rolled_back, tflite (a complete TFLite version
    exists), tflite_current (the TFLite pointer names it)."""
    state, served = serving_state(serving_dir), served_version(serving_dir)
    tflite, pointer = set(complete_versions(tflite_dir, TFLITE_COMMIT_FILE)), \
        read_pointer(tflite_dir)
    rows = []
    for version in versions(serving_dir, complete_only=False):
        path = os.path.join(serving_dir, str(version))
        record = provenance(path) or {}
        rows.append({
            "version": version, "pushed_at": _iso(record.get("pushed_at")),
            "spans": record.get("spans", []), "accuracy": record.get("accuracy"),
            "source_uri": record.get("source_uri"),
            "drift_overridden": record.get("drift_overridden"),
            "warm_started_from": record.get("warm_started_from"),
            "complete": is_complete(path), "served": version == served,
            "pinned": version == state.pinned, "rolled_back": version in state.rolled_back,
            "tflite": version in tflite, "tflite_current": version == pointer})
    return rows


def require_versions(config: PipelineConfig) -> None:
    """Refuses, naming --output, an output with no version of --model-name; in a bucket,
    a missing, refused or mistyped one first, with the store's reason."""
    if files.has_buckets(config.run.output):
        check_readable(config.run.output, "--output")
    if not versions(config.serving_dir, complete_only=False):
        raise UsageError(f"--output {config.run.output}: no versions pushed to "
                         f"{config.serving_dir} (is --model-name right?)")


def list_versions(config: PipelineConfig) -> dict:
    """The `--json` document: model, serving_dir, served, pinned, versions (version_rows)."""
    require_versions(config)
    rows = version_rows(config.serving_dir, config.tflite_dir)
    return {"model": config.run.model_name, "serving_dir": config.serving_dir,
            "served": served_version(config.serving_dir),
            "pinned": serving_state(config.serving_dir).pinned, "versions": rows}


def _status(row: dict) -> str:
    if not row["complete"]:
        return "incomplete"
    if row["served"]:
        return "served (pinned)" if row["pinned"] else "served"
    return "rolled back" if row["rolled_back"] else ""


def format_versions(listing: dict) -> str:
    """The human table: a header line, then one line per version, oldest first."""
    lines = [f"{listing['model']} in {listing['serving_dir']}",
             f"{'version':>10}  {'pushed (UTC)':20}  {'spans':12}  {'accuracy':>8}  "
             f"{'tflite':7}  {'warm from':>10}  status"]
    for row in listing["versions"]:
        accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.4f}"
        spans = ",".join(map(str, row["spans"])) or "-"
        tflite = "current" if row["tflite_current"] else ("yes" if row["tflite"] else "-")
        warm = (row["warm_started_from"] or {}).get("version")
        lines.append(f"{row['version']:>10}  {row['pushed_at'] or '-':20}  {spans:12}  "
                     f"{accuracy:>8}  {tflite:7}  {'-' if warm is None else warm:>10}  "
                     f"{_status(row)}".rstrip())
    return "\n".join(lines)


def write_json(listing: dict, path: str) -> None:
    """The listing as JSON at `path` (local or gs://)."""
    files.write_text(path, json.dumps(listing, indent=2) + "\n")
