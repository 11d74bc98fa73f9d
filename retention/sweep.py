"""`imagepipe gc`: check the output, plan what to keep and delete, carry it out.

    imagepipe gc --output OUT                       # a dry run: what it would delete
    imagepipe gc --output OUT --keep-versions 5 --min-age 2d --yes --json gc.json

The plan reads the push destination (versions, the pin, the TFLite pointer, each kept
version's provenance), the local ML Metadata store where there is one
(retention/lineage.py), and one listing of the output (retention/inventory.py); the
decisions are retention/policy.py's. The caller holds the output's locks while a plan is
carried out (cli/commands.py). Docs: docs/retention.md.
"""
import dataclasses
import json
import os
import time
from typing import List, Optional, Tuple

from components.image_pusher.versions import (COMMIT_FILE, TFLITE_COMMIT_FILE,
                                               complete_versions, provenance, read_pointer,
                                               served_version, serving_state)
from core.durations import parse_duration
from core.errors import UsageError
from core.storage import files
from core.storage.access import check_readable
from retention.inventory import TFLITE, VERSION, take_inventory
from retention.policy import Decision, Facts, decide, kept_versions
from settings.command_sections import NO_MIN_AGE, RetentionSettings
from settings.config import PipelineConfig

# Deleted first in a version folder: readers (versions.complete_versions, TF Serving)
# then see an incomplete version at once, never a loadable one losing its files.
_COMMIT = {VERSION: COMMIT_FILE, TFLITE: TFLITE_COMMIT_FILE}


@dataclasses.dataclass(frozen=True)
class GcPlan:
    """Every unit's decision, the output's total size, and what the plan rests on."""

    decisions: List[Decision]
    total: int  # bytes of every file under the output
    versions: Tuple[int, ...]  # the kept versions
    served: Optional[int]
    notes: Tuple[str, ...] = ()

    @property
    def doomed(self) -> List[Decision]:
        return [d for d in self.decisions if not d.keep]

    @property
    def doomed_bytes(self) -> int:
        return sum(d.unit.size for d in self.doomed)


def min_age_seconds(text: str) -> float:
    """--min-age in seconds; 0 for NO_MIN_AGE (RetentionSettings checked the text)."""
    return 0.0 if text == NO_MIN_AGE else parse_duration(text)


def check_output(config: PipelineConfig) -> None:
    """Refuses, naming the flag, an output no run wrote to and a --model-name it does
    not serve (which would keep none of its models)."""
    output = config.run.output
    if files.has_buckets(output):
        check_readable(output, "--output")
    if not files.isdir(config.pipeline_root):
        raise UsageError(f"--output {output}: no pipeline root {config.pipeline_root} (no run "
                         "wrote here; for a compiled pipeline give its --pipeline-root)")
    serving_root = os.path.dirname(config.serving_dir)
    models = files.list_dir(serving_root)[0] if files.isdir(serving_root) else []
    if models and config.run.model_name not in models:
        raise UsageError(f"--model-name {config.run.model_name}: {serving_root} serves "
                         f"{', '.join(models)} only")


def _lineage(config: PipelineConfig, sources: dict):
    """The local store's lineage, or None where this output has no store here."""
    if not os.path.exists(config.metadata_path):
        return None
    from report.metadata import open_store  # read-only: a dry run writes nothing
    from retention.lineage import lineage_of, pipeline_names
    store = open_store(config)
    names = pipeline_names(store)
    if names and config.run.pipeline_name not in names:
        raise UsageError(f"--pipeline-name {config.run.pipeline_name}: "
                         f"{config.metadata_path} records runs of {', '.join(names)} only")
    return lineage_of(store, config.run.pipeline_name, sources)


def plan_gc(config: PipelineConfig, settings: RetentionSettings,
            now: Optional[float] = None) -> GcPlan:
    """What gc keeps and deletes in `config.run.output`, and why; changes nothing."""
    serving_dir, tflite_dir = config.serving_dir, config.tflite_dir
    served = served_version(serving_dir)
    kept = kept_versions(complete_versions(serving_dir), served,
                         serving_state(serving_dir).pinned, settings.keep_versions)
    sources = {v: (provenance(os.path.join(serving_dir, str(v))) or {}).get("source_uri")
               for v in kept}
    lineage = _lineage(config, sources)
    store = config.ingest_options().span_store
    inventory = take_inventory(config.run.output, serving_dir, tflite_dir,
                               config.pipeline_root, store, config.run.pipeline_name,
                               lineage and lineage.records)
    facts = Facts(kept, sources, read_pointer(tflite_dir), lineage.kept if lineage else {},
                  settings.keep_versions)
    decisions = decide(inventory.units, facts, min_age_seconds(settings.min_age),
                       time.time() if now is None else now)
    return GcPlan(decisions, inventory.total, tuple(kept), served, _notes(config, lineage))


def _notes(config: PipelineConfig, lineage) -> Tuple[str, ...]:
    """What the plan had to leave alone, and why."""
    if lineage is None:
        notes = [f"no ML Metadata store at {config.metadata_path}: the artifact folders of "
                 "local runs, if any, are left as they are"]
        runs = os.path.join(config.pipeline_root, config.run.pipeline_name)
        if not files.isdir(runs):
            notes.append(f"no compiled runs of --pipeline-name {config.run.pipeline_name} "
                         f"in {runs}")
        return tuple(notes)
    root = config.pipeline_root.rstrip("/") + "/"
    ours = lineage.records.ours
    if ours and not any(uri.startswith(root) for uri in ours):
        return (f"ML Metadata records this pipeline's artifacts outside {root} (was the output "
                "moved?): the artifact folders here are left as they are",)
    return ()


def carry_out(plan: GcPlan, config: PipelineConfig) -> int:
    """Marks the doomed artifacts DELETED in ML Metadata, then deletes every doomed unit;
    returns how many records were marked. Records first: a gc stopped in between leaves
    files that no resolver or cache reads, which the next gc deletes."""
    ids = [i for d in plan.doomed for i in d.unit.artifact_ids]
    marked = 0
    if ids:
        from rollback.revocations import open_store  # writable; loads TFX (seconds)
        from retention.lineage import mark_deleted
        marked = mark_deleted(open_store(config.metadata_path), ids)
    for decision in plan.doomed:
        unit = decision.unit
        if unit.kind in _COMMIT:
            files.remove(os.path.join(unit.path, _COMMIT[unit.kind]))
        files.rmtree(unit.path)
    return marked


def _entry(decision: Decision) -> dict:
    unit = decision.unit
    return {"path": unit.path, "kind": unit.kind, "bytes": unit.size, "reason": decision.reason}


def document(plan: GcPlan, config: PipelineConfig, settings: RetentionSettings,
             deleted: bool, marked: int = 0) -> dict:
    """The `--json` record: what was kept and deleted (or would be, when `deleted` is
    False), with sizes in bytes and reasons, and the totals."""
    doomed = plan.doomed_bytes
    return {
        "output": config.run.output, "model": config.run.model_name,
        "pipeline": config.run.pipeline_name, "keep_versions": settings.keep_versions,
        "min_age": settings.min_age, "deleted": deleted, "served": plan.served,
        "versions_kept": list(plan.versions),
        "totals": {"before": plan.total, "kept": plan.total - doomed, "delete": doomed},
        "marked_deleted": marked,
        "kept": [_entry(d) for d in plan.decisions if d.keep],
        "delete": [_entry(d) for d in plan.doomed], "notes": list(plan.notes)}


def write_json(record: dict, path: str) -> None:
    """The record at `path` (local or gs://), replaced whole (files.write_text)."""
    files.write_text(path, json.dumps(record, indent=2) + "\n")
