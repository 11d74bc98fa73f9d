"""The lines a run prints about its summary: a few for humans; summary.json has the rest."""
from typing import List, Optional

from core.contract import BASELINE_ID, WARM_START_ID
from modules.tuning.choice import describe
from report.verdicts import (FAIL, Verdict, accuracy_text, audit_verdicts,
                             baseline_text, classes_by_accuracy, figure_text, serving,
                             with_leaked_text)

LEAST_ACCURATE_CLASSES = 2  # named on the console with their count and interval


def data_warnings(empty_classes: List[str], skipped: List[dict]) -> List[str]:
    """Lines about data that was present but not used; none when all was used."""
    lines = []
    if empty_classes:
        lines.append("warning   folders without images are not classes: "
                     + ", ".join(empty_classes))
    if skipped:
        lines.append(f"warning   {len(skipped)} undecodable image(s) skipped, e.g. "
                     f"{skipped[0]['path']}: {skipped[0]['reason']}")
    return lines


def _training_line(training: Optional[dict]) -> List[str]:
    if not training or not training.get("examples_per_s"):
        return []
    return [f"training  {training['examples_per_s']:,.0f} examples/s in fit after the first "
            f"epoch ({training['first_epoch_s']:.1f}s)"]


def _repeat_line(training: Optional[dict]) -> List[str]:
    """The flags that repeat this training (modules/training/repeat.py), or why none do."""
    if not training or "repeat_with" not in training:  # no training, or an older run's
        return []
    if training["repeat_with"]:
        return ["repeat    add " + " ".join(training["repeat_with"]) + " to this command to "
                "train the same again"]
    stop = training["interrupted"]
    return ["repeat    none: " + (f"training was interrupted at epoch {stop['epoch']}: "
                                  f"{stop['reason']}" if stop else
                                  "it started from a warm start's weights or --tune's search, "
                                  "which no flag gives")]


def tuning_lines(tuning: Optional[dict]) -> List[str]:
    """The search, when --tune ran one: trials, the best score, the values trained with."""
    if not tuning:
        return []
    scores = [row["score"] for row in tuning["trials"] if row["score"] is not None]
    used = tuning.get("trained_with") or {}
    values = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in sorted(used.items()))
    choice = tuning.get("choice")  # None for a module file's own tuner
    return [f"tuned     {len(tuning['trials'])} trials ({tuning['stopped_early']} stopped "
            f"early), best holdout accuracy "
            + (f"{max(scores):.4f}" if scores else "n/a")
            + (f"; trained with {values}" if values else "")] + (
        [f"          {describe(choice)}"] if choice else [])


def ascii_text(text: str) -> str:
    """The report's signs in ASCII: terminals and CI logs may not show them."""
    return (text.replace("−", "-").replace("–", "-").replace("ε", "eps")
            .replace("…", "..."))


def _verdict_line(verdict: Verdict) -> str:
    """`name      text`, in ASCII."""
    text = ascii_text(verdict.text)
    text = text[0].lower() + text[1:]
    return f"{verdict.name:<10}{'FAILED: ' if verdict.status == FAIL else ''}{text}"


def accuracy_lines(evaluation: dict) -> List[str]:
    """The accuracy judged, with its count and 95% interval, and the verdict; the accuracy
    with leaked eval images; the change from the baseline; the least accurate classes."""
    lines = ["accuracy  " + accuracy_text(evaluation)
             + (" - blessed" if evaluation["blessed"] else " - NOT blessed")
             + f" ({evaluation['reason']})"]
    with_leaked, baseline = with_leaked_text(evaluation), baseline_text(evaluation)
    lines += [f"          {with_leaked}"] if with_leaked else []
    lines += [f"baseline  {baseline}"] if baseline else []
    return [ascii_text(line) for line in lines + _classes_line(evaluation)]


def _classes_line(evaluation: dict) -> List[str]:
    """The least accurate classes with their counts and intervals, when TFMA counted them."""
    known = classes_by_accuracy(evaluation)
    if not known:
        return []
    shown = [f"{name} " + figure_text(accuracy, counted["examples"], counted["interval"])
             for name, accuracy, counted in known[:LEAST_ACCURATE_CLASSES]]
    return [f"classes   least accurate of {len(known)}: " + ", ".join(shown)]


def audit_lines(summary: dict) -> List[str]:
    """A line each for data health, leakage, suspects, robustness and slices, when known."""
    return [_verdict_line(v) for v in audit_verdicts(summary)]


def _tflite_line(pushed: dict) -> List[str]:
    """Where the TFLite version went, or why the converter refused it; nothing when the
    push itself was refused (the lines above say why)."""
    gate = pushed.get("tflite_gate") or {}
    if pushed.get("tflite"):
        # The conversion asked for lost too much on the eval split: which one shipped, and why.
        fell_back = gate.get("reason") if len(gate.get("tried") or []) > 1 else None
        return [f"tflite    {pushed['tflite']}" + (f" ({fell_back})" if fell_back else "")]
    if gate and not gate.get("ok"):
        return [f"tflite    not pushed: {gate.get('reason')}"]
    return []


def _serving_check_line(summary: dict) -> List[str]:
    verdict = serving(summary)
    return [f"serving   {verdict.text.removeprefix('Serving ')}"] if verdict else []


def continuous_lines(summary: dict) -> List[str]:
    """Spans, warm start and drift: lines only for what a span pattern or a base model adds."""
    lines = []
    spans = summary.get("spans")
    if spans:
        lines.append(f"spans     trained on {_numbers(spans['trained'])}, evaluated on span "
                     f"{spans['evaluated']}; ingested {_numbers(spans['ingested']) or 'none'}"
                     f", reused {_numbers(spans['reused']) or 'none'}")
    warm = summary.get("warm_start")
    if warm:
        lines.append("warm      " + (f"from {warm['from']}: {warm['reason']}, {warm['epochs']} "
                                     f"epochs instead of {warm['planned_epochs']}"
                                     if warm.get("from") else f"no: {warm['reason']}"))
    drift = summary.get("drift")
    if drift and drift["verdict"] == "drift":
        lines.append(f"drift     span {drift['span']} against span {drift['previous_span']}: "
                     + "; ".join(f"{name} {drift['features'][name]['detail']}"
                                 for name in drift["drifted"]))
    elif drift and drift.get("previous_span") is not None and drift["verdict"] == "ok":
        lines.append(f"drift     none: span {drift['span']} against span "
                     f"{drift['previous_span']}")
    elif drift and drift.get("previous_span") is not None:
        lines.append(f"drift     not compared: {drift['reason']}")
    blocked = summary["pushed"].get("blocked")
    if blocked:
        lines.append(f"blocked   {blocked}")
    verdict = summary["pushed"].get("verdict")
    if verdict and verdict["kind"] != "pushed":  # a push says so on its own line
        lines.append(f"verdict   {verdict['kind']}: {verdict['reason']}")
    return lines


def _numbers(values: List[int]) -> str:
    return ", ".join(str(v) for v in values)


RESOLVER_IDS = (BASELINE_ID, WARM_START_ID)


def _nothing_new_line(summary: dict) -> List[str]:
    """A run whose every step was a cache hit trained and pushed nothing: the same data and
    settings as an earlier run (locally, TFX's cache is what skips a week without data)."""
    # Resolvers run every time (they only query ML Metadata) and are never cache hits.
    steps = [node for node in summary["timings_s"] if node not in ("total", *RESOLVER_IDS)]
    if steps and set(steps) <= set(summary["cached"]):
        return ["nothing   new: every step was a cache hit (the same data and settings as an "
                "earlier run); nothing was trained or pushed"]
    return []


def _time_line(summary: dict) -> str:
    return (f"time      {summary['timings_s']['total']:.1f}s total, "
            f"{len(summary['cached'])}/{len(summary['timings_s']) - 1} components cached: "
            + ", ".join(f"{node} {seconds:.1f}" for node, seconds
                        in summary["timings_s"].items() if node != "total"))


def format_summary(summary: dict) -> str:
    """A few lines for humans; summary.json has the rest."""
    data, evaluation, pushed = summary["data"], summary["eval"], summary["pushed"]
    lines: List[str] = [
        f"data      {data['path']}: {len(data['classes'])} classes, "
        + ", ".join(f"{k} {v:,}" for k, v in data["splits"].items())
        + f"; {data['skipped']:,} skipped, {data['ignored']:,} ignored",
        *accuracy_lines(evaluation),
        *audit_lines(summary),
        *continuous_lines(summary),
        f"pushed    {pushed['serving'] or 'nothing'}",
        *_serving_check_line(summary),
        *_tflite_line(pushed),
        *data_warnings(data["empty_classes"], data["skipped_files"]),
        *tuning_lines(summary.get("tuning")),
        *_training_line(summary.get("training")),
        *_repeat_line(summary.get("training")),
        *_nothing_new_line(summary),
        _time_line(summary),
    ]
    return "\n".join(lines)
