"""The report's sections in HTML: data health, suspects, saliency, robustness, slices, tuning.

Each opens with its verdict (verdicts.py), so a reader knows in a glance
whether to look closer; a section whose input is absent is left out. Audit
images are linked as "audit/<name>.png": build.py copies the Evaluator's
audit folder beside index.html.
"""
import html
from typing import Iterable, List, Optional

from modules.tuning.choice import describe
from report import verdicts
from report.verdicts import Verdict

SEVERITIES = ("1", "2", "3")
PER_CLASS_ROWS = 100  # classes in the per-class table, the least accurate first


def esc(value) -> str:
    """Any value as HTML text."""
    return html.escape(str(value))


def verdict_html(verdict: Optional[Verdict], tag: str = "p") -> str:
    """A verdict's line in its colour; nothing for None."""
    if verdict is None:
        return ""
    return f'<{tag} class="verdict {verdict.status}">{esc(verdict.line())}</{tag}>'


def _section(anchor: str, title: str, found: Iterable[Optional[Verdict]], body: str) -> str:
    lines = "".join(verdict_html(v) for v in found)
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{lines}{body}</section>'


def _table(header: List[str], rows: List[List[str]], cls: str = "") -> str:
    """A table of already escaped cells."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="grid {cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _figure(src: str, caption: str, wrong: bool) -> str:
    return (f'<figure class="{"wrong" if wrong else "right"}"><img src="{esc(src)}" alt="">'
            f"<figcaption>{caption}</figcaption></figure>")


def data_health(summary: dict) -> str:
    """Counts of what ingestion found, and a few examples of each."""
    health = summary.get("data_health")
    if not health:
        return ""
    counts = health.get("counts") or {}
    rows = [[esc(k.replace("_", " ")), f"{v:,}"] for k, v in counts.items()]
    imbalance = health.get("imbalance") or {}
    if imbalance.get("ratio") is not None:
        rows.append(["imbalance", f"{imbalance['ratio']:.1f}:1 (largest to smallest class); "
                                  f"remedy: {esc(imbalance.get('remedy', 'none'))}"])
    examples = [_group_item(g, "label conflict") for g in health.get("label_conflicts", [])]
    examples += [_group_item(g, f"{g.get('kind', '')} duplicate")
                 for g in health.get("duplicates", [])]
    examples += [_leak_item(p) for p in health["leakage"].get("pairs", [])]
    body = _table(["found", "count"], rows) + (f'<ul class="paths">{"".join(examples)}</ul>'
                                               if examples else "")
    return _section("data-health", "Data health",
                    [verdicts.data_health(summary), verdicts.leakage(summary)], body)


def _leak_item(pair: dict) -> str:
    """A leaked eval image and its train copies (the report names a few; "copies" counts
    them all)."""
    train = pair.get("train", [])
    more = pair.get("copies", len(train)) - len(train)
    return (f"<li>leaked ({esc(pair.get('kind', ''))}): eval {esc(pair.get('eval'))} = train "
            f"{esc(', '.join(train))}{f' (+{more} more)' if more > 0 else ''}</li>")


def _group_item(group: dict, what: str) -> str:
    pairs = zip(group.get("paths", []), group.get("labels", []))
    return f"<li>{esc(what)}: " + ", ".join(f"{esc(p)} ({esc(label)})" for p, label in pairs) \
        + "</li>"


def suspects(summary: dict) -> str:
    """Thumbnails of the eval images whose given label the model doubts most."""
    result = summary.get("suspects")
    if not result:
        return ""
    tiles = "".join(_figure(s["thumbnail"], f"{esc(s['path'])}<br>given <b>{esc(s['given'])}"
                            f"</b><br>predicted <b>{esc(s['predicted'])}</b> "
                            f"({s['score']:.2f})", True)
                    for s in result.get("top", []) if s.get("thumbnail"))
    return _section("suspects", "Suspected label errors", [verdicts.suspects(summary)],
                    f'<div class="tiles">{tiles}</div>' if tiles else "")


def saliency(summary: dict) -> str:
    """The audit's saliency overlays, misclassified images first."""
    result = summary.get("saliency")
    if not result or not result.get("images"):
        return ""
    images = sorted(result["images"], key=lambda i: i.get("actual") == i.get("predicted"))
    tiles = "".join(_figure(i["overlay"], f"{esc(i.get('path', ''))}<br>actual "
                            f"<b>{esc(i['actual'])}</b><br>predicted <b>{esc(i['predicted'])}"
                            "</b>", i["actual"] != i["predicted"]) for i in images)
    return _section("saliency", "Saliency: where the model looked",
                    [verdicts.saliency(summary)], f'<div class="tiles">{tiles}</div>')


def robustness(summary: dict) -> str:
    """Accuracy per corruption and severity, the mean, and FGSM's."""
    result = summary.get("robustness")
    if verdicts.robustness(summary) is None:
        return ""
    corruptions = result.get("corruptions", {})
    severities = sorted({s for levels in corruptions.values() for s in levels}, key=int) \
        or list(SEVERITIES)
    rows = [[esc(name.replace("_", " ")), *(_accuracy(levels.get(s), result["clean"])
                                            for s in severities)]
            for name, levels in corruptions.items()]
    rows.append(["<b>mean</b>", _accuracy(result.get("mean"), result["clean"])]
                + [""] * (len(severities) - 1))
    fgsm = result.get("fgsm")
    note = (f"<p>accuracy {verdicts.clean_label(result)}: the eval images corrupted"
            + (f"; FGSM attack at ε {fgsm['epsilon']:g}: {fgsm['accuracy']:.3f}"
               if fgsm else "") + "</p>")
    return _section("robustness", "Robustness", [verdicts.robustness(summary)],
                    _table(["corruption", *(f"severity {s}" for s in severities)], rows) + note)


def _accuracy(value: Optional[float], reference: Optional[float]) -> str:
    """An accuracy cell; well below the reference (over 0.1) is marked."""
    if value is None:
        return "–"
    low = reference is not None and value < reference - 0.1
    return f'<span class="{"low" if low else ""}">{value:.3f}</span>'


def _ci(interval: Optional[list]) -> str:
    """A 95% interval cell: "0.530–0.800", or a dash."""
    return "–" if not interval else f"{interval[0]:.3f}–{interval[1]:.3f}"


def slices(summary: dict) -> str:
    """Accuracy per value of each slice feature, with its 95% interval, the worst marked,
    and the gap."""
    result = summary.get("slices")
    if not result:
        return ""
    worst = result.get("worst") or {}
    tables = []
    for feature, values in (result.get("by_feature") or {}).items():
        rows = [[f"<b>{esc(value)} (worst)</b>" if worst.get("feature") == feature and
                 worst.get("value") == value else esc(value),
                 _accuracy(cell.get("accuracy"), result.get("overall")),
                 f"{cell.get('examples', 0):,}", _ci(cell.get("interval"))]
                for value, cell in values.items()]
        tables.append(f"<div><h3>{esc(verdicts.slice_name(feature))}</h3>"
                      + _table(["value", "accuracy", "eval images", "95% CI"], rows) + "</div>")
    note = (f"<p>overall {result.get('overall', 0):.3f}; slices with fewer than "
            f"{result.get('min_examples', 0):,} images are not ranked; a slice is judged "
            "below the overall accuracy by the upper bound of its 95% CI (the gap beyond "
            "chance)</p>")
    return _section("slices", "Slices", [verdicts.slices(summary)],
                    note + f'<div class="slices">{"".join(tables)}</div>')


def per_class(summary: dict) -> str:
    """Each class's accuracy with its eval images and 95% interval, the least accurate first
    (PER_CLASS_ROWS of them); nothing for a run without the counts (an older one)."""
    evaluation = summary.get("eval") or {}
    known = verdicts.classes_by_accuracy(evaluation)
    if not known:
        return ""
    rows = [[esc(name), _accuracy(accuracy, evaluation.get("accuracy")),
             f"{counted['examples']:,}", _ci(counted["interval"])]
            for name, accuracy, counted in known[:PER_CLASS_ROWS]]
    more = len(known) - len(rows)
    note = (f"<p>the {len(rows):,} least accurate of {len(known):,} classes; summary.json "
            "has every one</p>" if more > 0 else "")
    return (f'<section id="per-class"><h2>Accuracy per class</h2>{note}'
            + _table(["class", "accuracy", "eval images", "95% CI"], rows) + "</section>")


def tuning(summary: dict) -> str:
    """Every trial of a --tune search with its holdout score; the one trained, marked."""
    found = summary.get("tuning")
    if not found:
        return ""
    used = found.get("trained_with") or {}
    chosen = (found.get("choice") or {}).get("trained")  # None for a module's own tuner
    names = sorted({name for row in found["trials"] for name in row["values"]})
    rows, marked = [], False
    for row in found["trials"]:
        score = "" if row["score"] is None else f"{row['score']:.4f}"
        # once: the oracle may propose the same values twice
        trained = (row["trial_id"] == chosen if chosen is not None
                   else used and row["values"] == used and not marked)
        mark = (" (plan)" if row.get("plan") else "") + (" (trained)" if trained else "")
        marked = marked or trained
        stopped = row.get("stopped") or row.get("message") or ""
        epochs = (f"{row['epochs_run']}/{row['epochs_planned']}" if "epochs_run" in row
                  else "")
        rows.append([esc(row["trial_id"] + mark), esc(score),
                     *[esc(_short(row["values"].get(n))) for n in names],
                     esc(epochs), esc(stopped)])
    line = esc(f"{len(found['trials'])} trials, {found['stopped_early']} stopped early; "
               "scores are accuracy on train images held out of the trials' training."
               + (f" Verdict: {describe(found['choice'])}." if found.get("choice") else ""))
    return _section("tuning", "Tuning", [], f"<p>{line}</p>" + _table(
        ["trial", "holdout accuracy", *[esc(n) for n in names], "epochs", "stopped"], rows))


def _short(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)
