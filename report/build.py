"""Build <output>/report/: five PNGs, the audit's images, and an index.html (page.py)."""
import json
import os
import shutil
from typing import Dict, Optional

from core.contract import AUDIT_DIR, MODEL_CARD_HTML
from core.storage import files
from core.storage.tree_copy import copy_tree
from settings.config import PipelineConfig
from core.errors import UsageError
from report.page import index_html

PNGS = ("gallery.png", "confusion_matrix.png", "per_class_accuracy.png",
        "training_curves.png", "transformed_samples.png")
# What the pictures were drawn from. A fully cached re-run has the same inputs,
# so it redraws nothing (redrawing took seconds of every warm run; measured:
# docs/performance.md); index.html is always rewritten.
INPUTS_FILE = ".inputs.json"


def build_report(config: PipelineConfig, report_dir: str = None) -> str:
    """Writes the report of the latest run in `config.run.output`; returns index.html's path.

    Charts are drawn into a local folder: `<output>/report` itself, or for a
    gs:// output the state folder's copy, uploaded afterwards (index.html last).
    """
    if not files.exists(config.summary_path):
        raise UsageError(f"--output {config.run.output}: no summary.json; run `imagepipe run "
                         f"--output {config.run.output}` first")
    summary = json.loads(files.read_text(config.summary_path))
    target = report_dir or os.path.join(config.run.output, "report")
    local = target if not files.is_remote(target) else os.path.join(config.state_path, "report")
    index = _build(config, summary, local)
    if local == target:
        return index
    copy_tree(local, target, last="index.html")
    return os.path.join(target, "index.html")


def _build(config: PipelineConfig, summary: dict, report_dir: str) -> str:
    """The report's files in the local folder `report_dir`; returns index.html's path."""
    from report import collect  # heavy: TensorFlow
    os.makedirs(report_dir, exist_ok=True)
    path = lambda name: os.path.join(report_dir, name)  # noqa: E731
    uris = collect.artifact_uris(config)
    audit = (summary["eval"].get("audit") or {}).get("uri")
    inputs = json.dumps({"uris": uris, "examples": summary["data"]["examples_uri"],
                         "eval": summary["eval"]}, sort_keys=True)
    if _read(path(INPUTS_FILE)) != inputs:
        _remove(path(INPUTS_FILE))  # a failure below must not leave it vouching
        _draw(collect, summary, uris, path)
        _copy_audit(audit, path(AUDIT_DIR))
        with open(path(INPUTS_FILE), "w") as f:
            f.write(inputs)
    _copy_model_card(summary["pushed"].get("model_card"), path(MODEL_CARD_HTML))
    index = path("index.html")
    with open(index + ".tmp", "w") as f:
        f.write(index_html(summary, [n for n in PNGS if os.path.exists(path(n))]))
    os.replace(index + ".tmp", index)
    return index


def _copy_audit(evaluation_uri: Optional[str], target: str) -> None:
    """The audit's thumbnails and saliency maps, beside index.html (the page stays whole
    when the run's artifacts are moved or the report is served from a bucket)."""
    shutil.rmtree(target, ignore_errors=True)  # a previous run's images
    source = evaluation_uri and os.path.join(evaluation_uri, AUDIT_DIR)
    if source and files.isdir(source):
        copy_tree(source, target)


def _copy_model_card(card: Optional[str], target: str) -> None:
    """The pushed version's model card, linked from the header; none: no stale copy."""
    if card and files.exists(card):
        files.write_bytes(target, files.read_bytes(card))
    else:
        _remove(target)


def _draw(collect, summary: dict, uris: Dict[str, str], path) -> None:
    """The five PNGs (the confusion matrix only up to charts.MAX_CHART_CLASSES classes)."""
    from report import charts  # matplotlib: only when something is drawn
    data, evaluation = summary["data"], summary["eval"]
    classes = data["classes"]
    records = collect.eval_records(data["examples_uri"])
    charts.gallery(*collect.gallery_inputs(uris, data["examples_uri"], records, classes),
                   path(PNGS[0]))
    _remove(path(PNGS[1]))
    if evaluation["confusion_matrix"] is not None and len(classes) <= charts.MAX_CHART_CLASSES:
        charts.confusion(evaluation["confusion_matrix"], classes, path(PNGS[1]))
    charts.per_class(evaluation["per_class"], evaluation["accuracy"], path(PNGS[2]),
                     evaluation.get("per_class_interval"))
    charts.curves(collect.training_history(uris["ModelRun"]), path(PNGS[3]),
                  collect.head_epochs(summary.get("training")))
    charts.samples(collect.transformed_samples(uris["TransformGraph"], records, classes),
                   path(PNGS[4]))


def _read(path: str):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
