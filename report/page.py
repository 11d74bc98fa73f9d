"""index.html: the overall verdict, the run's header, then each section and picture.

Pure: summary.json in, one self-contained page out (its pictures are
relative links to files beside it). build.py writes it.
"""
from typing import List, Sequence, Tuple

from core.contract import MODEL_CARD_HTML
from report import html_sections as sections, verdicts
from report.console import continuous_lines
from report.html_sections import esc

# The pictures build.py draws, each shown under the section it belongs to.
PREDICTIONS = ("gallery.png", "confusion_matrix.png", "per_class_accuracy.png")
TRAINING = ("training_curves.png", "transformed_samples.png")
STYLE = """
body{font-family:sans-serif;margin:1.5em 2em;max-width:1320px;color:#1f2328}
h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table.header th{text-align:left;vertical-align:top;padding:.15em 1em .15em 0;white-space:nowrap}
table.header td{overflow-wrap:anywhere;padding:.15em 0}
.why{color:#57606a}
p.verdict{margin:.35em 0;font-size:1.05em}
.verdict.ok{color:#1a7f37}.verdict.warn{color:#9a6700}.verdict.fail{color:#cf222e}
.verdict.info{color:#57606a}
.overall{font-size:1.3em;font-weight:bold;padding:.4em .7em;border-left:6px solid;
background:#f6f8fa}
table.grid{border-collapse:collapse;margin:.5em 0}
table.grid th,table.grid td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;
overflow-wrap:anywhere}
.low{color:#cf222e;font-weight:bold}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:14px}
figure{margin:0}figure img{width:100%;height:auto;display:block;image-rendering:pixelated}
figcaption{font-size:.85em;overflow-wrap:anywhere;margin-top:.2em}
figure.wrong figcaption b{color:#cf222e}
.slices{display:flex;flex-wrap:wrap;gap:0 2.5em;align-items:flex-start}
ul.paths{font-size:.9em;overflow-wrap:anywhere}
img.chart{max-width:100%;height:auto;display:block;margin:.5em 0}
"""


def _plan_rows(summary: dict) -> List[Tuple[str, str]]:
    """Model, image size and epochs, each with the plan's reason (pipeline/planning/plan.py)."""
    plan = summary.get("plan")
    if not plan:
        return []
    values, reasons = plan.get("values", {}), plan.get("reasons", {})
    run = (summary.get("training") or {}).get("epochs_run")
    epochs = (f"{values['train_steps']} steps" if values.get("train_steps") else
              f"{values.get('epochs')}" + (f" (ran {run})" if run and run != values.get("epochs")
                                           else ""))
    rows = [("model", str(values.get("model")), "model"),
            ("image size", f"{values.get('image_size')} px", "image_size"),
            ("epochs", epochs, "epochs")]
    return [(name, f"{esc(value)} <span class='why'>— {esc(reasons.get(key, ''))}</span>")
            for name, value, key in rows]


def header_rows(summary: dict) -> List[Tuple[str, str]]:
    """(name, HTML) rows: data, accuracy (with its count and 95% interval), the change from
    the baseline, the plan, the serving check, pushes, times."""
    data, evaluation, pushed = summary["data"], summary["eval"], summary["pushed"]
    serving = verdicts.serving(summary)
    card = pushed.get("model_card")
    return [
        ("data", esc(f"{data['path']} ({data['format']}): {len(data['classes'])} classes, "
                     + ", ".join(f"{k} {v}" for k, v in data["splits"].items())
                     + f"; {data['skipped']} skipped")),
        ("accuracy", esc("; ".join(filter(None, [verdicts.accuracy_text(evaluation),
                                                 verdicts.with_leaked_text(evaluation)])))),
        *([("baseline", esc(verdicts.baseline_text(evaluation)))]
          if verdicts.baseline_text(evaluation) else []),
        ("blessed", esc(f"{'yes' if evaluation['blessed'] else 'NO'}: {evaluation['reason']}")),
        *_plan_rows(summary),
        # spans, warm start, drift and a blocked push: the console's lines, "key  value"
        *((line[:10].strip(), esc(line[10:])) for line in continuous_lines(summary)),
        ("serving check",
         sections.verdict_html(serving, "span") if serving else esc(_not_checked(summary))),
        ("pushed", esc(pushed["serving"] or "nothing")
         + (f' (<a href="{MODEL_CARD_HTML}">model card</a>)' if card else "")),
        ("tflite", esc(pushed.get("tflite") or "nothing")),
        ("time", esc(", ".join(f"{k} {v:.1f}s" for k, v in summary["timings_s"].items()))),
    ]


def _pictures(title: str, names: Sequence[str], pngs: Sequence[str]) -> str:
    shown = [n for n in names if n in pngs]
    if not shown:
        return ""
    return f"<section><h2>{esc(title)}</h2>" + "".join(
        f'<h3>{n[:-4].replace("_", " ")}</h3><img class="chart" src="{n}" alt="{n}">'
        for n in shown) + "</section>"


def index_html(summary: dict, pngs: Sequence[str] = PREDICTIONS + TRAINING) -> str:
    """The page: verdict, header, data health, predictions, audit sections, training."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in header_rows(summary))
    overall = verdicts.overall(summary)
    body = "".join([
        f'<p class="verdict overall {overall.status}">{esc(overall.line())}</p>',
        f'<table class="header">{rows}</table>',
        sections.data_health(summary),
        _pictures("Predictions on the eval split", PREDICTIONS, pngs),
        sections.per_class(summary),
        sections.suspects(summary), sections.saliency(summary),
        sections.robustness(summary), sections.slices(summary),
        sections.tuning(summary), _pictures("Training", TRAINING, pngs)])
    return ("<!doctype html><html><head><meta charset='utf-8'><title>imagepipe report</title>"
            f"<style>{STYLE}</style></head><body><h1>imagepipe run report</h1>"
            f"{body}</body></html>\n")


def _not_checked(summary: dict) -> str:
    """Why the Pusher ran no serving check: no blessing, or a gate that blocked the push."""
    blocked = summary["pushed"].get("blocked")
    if blocked:
        return f"not run: the push was blocked ({blocked})"
    return "not run (not blessed)" if not summary["eval"]["blessed"] else "not run"
