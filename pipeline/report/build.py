"""Build <output>/report/: five PNGs and an index.html that shows them with the summary."""
import html
import json
import os
from typing import Dict

from pipeline.config import PipelineConfig
from pipeline.errors import UsageError

PNGS = ("gallery.png", "confusion_matrix.png", "per_class_accuracy.png",
        "training_curves.png", "transformed_samples.png")


def build_report(config: PipelineConfig, report_dir: str = None) -> str:
    """Writes the report of the latest run in `config.output`; returns index.html's path."""
    if not os.path.exists(config.summary_path):
        raise UsageError(f"--output {config.output}: no summary.json; run `imagepipe run "
                         f"--output {config.output}` first")
    with open(config.summary_path) as f:
        summary = json.load(f)
    from pipeline.report import charts, collect  # heavy: TensorFlow, TFT, matplotlib
    report_dir = report_dir or os.path.join(config.output, "report")
    os.makedirs(report_dir, exist_ok=True)
    data, evaluation = summary["data"], summary["eval"]
    classes = data["classes"]
    uris = collect.artifact_uris(config)
    records = collect.eval_records(data["examples_uri"])
    path = lambda name: os.path.join(report_dir, name)  # noqa: E731
    charts.gallery(*collect.gallery_inputs(uris["Model"], records, classes), path(PNGS[0]))
    if evaluation["confusion_matrix"] is not None and len(classes) <= charts.MAX_CHART_CLASSES:
        charts.confusion(evaluation["confusion_matrix"], classes, path(PNGS[1]))
    charts.per_class(evaluation["per_class"], evaluation["accuracy"], path(PNGS[2]))
    charts.curves(collect.training_history(uris["ModelRun"]), path(PNGS[3]))
    charts.samples(collect.transformed_samples(uris["TransformGraph"], records, classes),
                   path(PNGS[4]))
    index = path("index.html")
    with open(index + ".tmp", "w") as f:
        f.write(index_html(summary, [n for n in PNGS if os.path.exists(path(n))]))
    os.replace(index + ".tmp", index)
    return index


def _rows(summary: dict) -> Dict[str, str]:
    data, evaluation, pushed = summary["data"], summary["eval"], summary["pushed"]
    baseline = evaluation["baseline_accuracy"]
    return {
        "data": f"{data['path']} ({data['format']}): {len(data['classes'])} classes, "
                + ", ".join(f"{k} {v}" for k, v in data["splits"].items())
                + f"; {data['skipped']} skipped",
        "accuracy": f"{evaluation['accuracy']:.4f}"
                    + ("" if baseline is None else f" (baseline {baseline:.4f})"),
        "blessed": f"{'yes' if evaluation['blessed'] else 'NO'}: {evaluation['reason']}",
        "pushed": pushed["serving"] or "nothing",
        "tflite": pushed["tflite"] or "nothing",
        "time": ", ".join(f"{k} {v:.1f}s" for k, v in summary["timings_s"].items()),
    }


def index_html(summary: dict, pngs=PNGS) -> str:
    """A self-contained page: the summary table, then the pictures (relative links)."""
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                   for k, v in _rows(summary).items())
    images = "".join(f'<h2>{name[:-4].replace("_", " ")}</h2><img src="{name}" alt="{name}">'
                     for name in pngs)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>imagepipe report</title>"
            "<style>body{font-family:sans-serif;margin:2em}th{text-align:left;padding-right:1em}"
            "img{max-width:100%}</style></head><body><h1>imagepipe run report</h1>"
            f"<table>{rows}</table>{images}</body></html>\n")
