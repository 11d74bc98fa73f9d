"""One-line verdicts on a run's summary: can this model be trusted, and if not, why.

Pure functions of summary.json. The report opens each section with one and
the page with `overall`; the console prints them after a run. A verdict is
None where its input is absent (an older run, a model that was not audited).
"""
import dataclasses
from typing import List, Optional, Tuple

OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"
SYMBOLS = {OK: "✓", WARN: "⚠", FAIL: "✗", INFO: "ℹ"}
# The overall line's words for each verdict's short name.
TITLES = {"health": "data health", "leakage": "leakage", "suspects": "suspected label errors",
          "robust": "robustness", "slices": "slices", "serving": "serving check"}


@dataclasses.dataclass(frozen=True)
class Verdict:
    """`name` is short (the console's first column); `text` is one sentence."""

    name: str
    status: str
    text: str

    def line(self) -> str:
        """The verdict with its sign: "⚠ 12 eval images have a copy in train"."""
        return f"{SYMBOLS[self.status]} {self.text}"


def _gate(summary: dict, name: str) -> Optional[dict]:
    """The audit's gate of that name, or None when it was not set (no limit: report only)."""
    gate = ((summary.get("eval") or {}).get("gates") or {}).get(name)
    return gate if gate and gate.get("limit") is not None else None


def _gated(gate: Optional[dict], otherwise: str) -> str:
    if gate is None:
        return otherwise
    return OK if gate.get("passed") else FAIL


def _limit(gate: Optional[dict]) -> str:
    if gate is None or gate.get("passed"):
        return ""
    return f", over the limit of {gate['limit']:.3f}"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def data_health(summary: dict) -> Optional[Verdict]:
    """Duplicates, label conflicts and tiny classes found at ingestion (leakage: below)."""
    health = summary.get("data_health")
    if not health:
        return None
    counts, imbalance = health.get("counts") or {}, health.get("imbalance") or {}
    groups = counts.get("exact_groups", 0) + counts.get("near_groups", 0)
    problems = [text for n, text in (
        (groups, f"{_count(groups, 'duplicate group')} "
                 f"({counts.get('duplicate_images', 0):,} images)"),
        (counts.get("conflict_groups", 0), _count(counts.get("conflict_groups", 0),
                                                   "label conflict"))) if n]
    tiny = imbalance.get("tiny_classes") or []
    if tiny:
        problems.append(f"tiny classes: {', '.join(tiny[:3])}" + ("…" if len(tiny) > 3 else ""))
    images = f"{health.get('images') or 0:,} images"
    if not problems:
        return Verdict("health", OK, f"No duplicates, label conflicts or tiny classes in {images}")
    return Verdict("health", WARN, f"{images}: " + ", ".join(problems))


def sample_text(examples: Optional[int], interval: Optional[list]) -> str:
    """"n=203, 95% CI 0.864–0.943": a figure's count and interval ("" without a count)."""
    if not examples:
        return ""
    text = f"n={examples:,}"
    return text + (f", 95% CI {interval[0]:.3f}–{interval[1]:.3f}" if interval else "")


def figure_text(value: Optional[float], examples: Optional[int] = None,
                interval: Optional[list] = None, digits: int = 4) -> str:
    """"0.9113 (n=203, 95% CI 0.864–0.943)"; "n/a" for no figure."""
    if value is None:
        return "n/a"
    sample = sample_text(examples, interval)
    return f"{value:.{digits}f}" + (f" ({sample})" if sample else "")


def _leak_free_examples(evaluation: dict) -> Optional[int]:
    """The count of the accuracy without leaked images (older summaries: from the audit's)."""
    found = evaluation.get("accuracy_without_leaked_examples")
    examples = (evaluation.get("audit") or {}).get("examples")
    if found is None and examples is not None:
        found = examples - evaluation["leaked"]
    return found


def accuracy_text(evaluation: dict) -> str:
    """The figure the run's blessing was judged on, with its count and 95% interval: the
    accuracy without the eval images that have a copy in train whenever there are any (and
    any are left), else the accuracy."""
    accuracy, without = evaluation.get("accuracy"), evaluation.get("accuracy_without_leaked")
    leaked = evaluation.get("leaked")
    if leaked and without is not None:
        sample = sample_text(_leak_free_examples(evaluation),
                             evaluation.get("accuracy_without_leaked_interval"))
        return (f"{without:.4f} without {_count(leaked, 'leaked eval image')}"
                + (f" ({sample})" if sample else ""))
    return figure_text(accuracy, evaluation.get("examples"), evaluation.get("accuracy_interval"))


def with_leaked_text(evaluation: dict) -> Optional[str]:
    """The accuracy with the leaked eval images, where accuracy_text leads with the one
    without them; else None."""
    accuracy = evaluation.get("accuracy")
    if not evaluation.get("leaked") or evaluation.get("accuracy_without_leaked") is None:
        return None
    sample = sample_text(evaluation.get("examples"), evaluation.get("accuracy_interval"))
    return ("n/a" if accuracy is None else f"{accuracy:.4f}") + " with them" + (
        f" ({sample})" if sample else "")


def baseline_text(evaluation: dict) -> Optional[str]:
    """The change from the last blessed model, candidate − baseline, with its paired 95%
    interval where both were scored on the same images; None without a baseline."""
    baseline, change = evaluation.get("baseline_accuracy"), evaluation.get("baseline_difference")
    if baseline is None and not change:
        return None
    after = "" if baseline is None else f"; baseline {baseline:.4f}"
    if not change:
        return f"{baseline:.4f}"
    text = f"candidate − baseline {_signed(change['value'])}"
    if change.get("interval"):
        low, high = change["interval"]
        return (text + f" (95% CI {_signed(low)} to {_signed(high)}, paired on the same "
                f"{change['examples']:,} eval images){after}")
    return text + f" (no interval: {change.get('reason') or 'not paired'}){after}"


def classes_by_accuracy(evaluation: dict) -> List[Tuple[str, float, dict]]:
    """(class name, accuracy, {"examples", "interval"}) of each class with eval images,
    the least accurate first; empty for a run without the counts (an older one)."""
    intervals = evaluation.get("per_class_interval") or {}
    return sorted(((name, accuracy, intervals[name]) for name, accuracy in
                   (evaluation.get("per_class") or {}).items()
                   if accuracy is not None and intervals.get(name)),
                  key=lambda row: (row[1], row[0]))


def _signed(value: float) -> str:
    return f"{value:+.4f}".replace("-", "−")


def chance_text(check: Optional[dict]) -> str:
    """"within chance of the threshold 0.9 …" where the threshold lies inside the judged
    figure's 95% interval; "" otherwise (or unknown)."""
    if not check or not check.get("within_chance"):
        return ""
    what = ("the accuracy without leaked eval images" if check["figure"] ==
            "accuracy_without_leaked" else "the accuracy")
    return (f"{what} is within chance of the threshold {check['value']}: it lies inside "
            "its 95% CI")


def clean_label(robustness: dict) -> str:
    """The robustness check's clean accuracy, with its sample: it is measured on a few
    hundred eval images (robustness.examples_for), not the whole split."""
    return f"{robustness['clean']:.3f} clean (n={robustness.get('examples', 0):,})"


def leakage(summary: dict) -> Optional[Verdict]:
    """Eval images with a copy in train, and what they add to the accuracy."""
    evaluation = summary.get("eval") or {}
    leaked = evaluation.get("leaked")
    if leaked is None:
        leaked = ((summary.get("data_health") or {}).get("leakage") or {}).get("count")
    if leaked is None:
        return None
    if not leaked:
        return Verdict("leakage", OK, "No eval image has a copy in train")
    gate, without = _gate(summary, "max_leakage_gain"), evaluation.get("accuracy_without_leaked")
    text = f"{_count(leaked, 'eval image')} {'has' if leaked == 1 else 'have'} a copy in train"
    if without is not None:
        gain = evaluation.get("leakage_gain")
        change = "" if gain is None else f" ({-gain:+.3f})".replace("-", "−")
        text += f"; accuracy without them {without:.3f}{change}{_limit(gate)}"
    threshold = _gate(summary, "min_leak_free_accuracy")
    if threshold and not threshold.get("passed"):
        text += f", under the accuracy threshold of {threshold['limit']:.3f}"
    failed = any(g and not g.get("passed") for g in (gate, threshold))
    # leaked images want removing even when the accuracy they add is within the gate's limit
    return Verdict("leakage", FAIL if failed else WARN, text)


def robustness(summary: dict) -> Optional[Verdict]:
    """Accuracy under corrupted inputs and an FGSM attack, against the clean accuracy."""
    result = summary.get("robustness")
    if not result or result.get("clean") is None or result.get("mean") is None:
        return None  # not measured (too few eval images)
    gate = _gate(summary, "min_robust_accuracy")
    worst = min(((acc, name, level) for name, levels in result.get("corruptions", {}).items()
                 for level, acc in levels.items()), default=None)
    text = (f"Accuracy {clean_label(result)}, {result['mean']:.3f} mean under "
            f"{len(result.get('corruptions', {}))} corruptions")
    if worst:
        text += f" (worst: {worst[1].replace('_', ' ')} {worst[2]}, {worst[0]:.3f})"
    if result.get("fgsm"):
        text += f"; FGSM ε {result['fgsm']['epsilon']:g}: {result['fgsm']['accuracy']:.3f}"
    if gate is not None and not gate.get("passed"):
        text += f", under the minimum of {gate['limit']:.3f}"
    return Verdict("robust", _gated(gate, INFO), text)


def slices(summary: dict) -> Optional[Verdict]:
    """The least accurate slice of the eval images and its gap to the overall accuracy."""
    result = summary.get("slices")
    if not result:
        return None
    worst, gate = result.get("worst"), _gate(summary, "max_slice_gap")
    if not worst:
        return Verdict("slices", INFO, f"No slice has the {result.get('min_examples', 0):,} "
                                       "eval images needed to compare it")
    interval = worst.get("interval")
    text = (f"Worst slice {slice_name(worst['feature'])}={worst['value']}: "
            f"{worst['accuracy']:.3f} on {_count(worst['examples'], 'image')}"
            + (f" (95% CI {interval[0]:.3f}–{interval[1]:.3f})" if interval else ""))
    if result.get("gap") is not None:
        text += f", {result['gap']:.3f} below overall {result['overall']:.3f}"
    return Verdict("slices", _gated(gate, INFO), text + _judged_text(result) + _limit(gate))


def _judged_text(result: dict) -> str:
    """How far below the overall accuracy a slice is beyond chance: its 95% upper bound's
    gap (audit/slice_gap.py judged_gap); "" where not judged (an older run)."""
    gap, judged, worst = result.get("judged_gap"), result.get("judged"), result.get("worst")
    if gap is None or not judged:
        return ""
    if gap <= 0:
        return "; no slice is below it beyond chance (each one's 95% CI reaches it)"
    same = (judged["feature"], judged["value"]) == (worst["feature"], worst["value"])
    who = "" if same else f"{slice_name(judged['feature'])}={judged['value']} is "
    return f"; {who}{gap:.3f} below at the upper bound of its 95% CI"


def slice_name(feature: str) -> str:
    """'image/slice/size' -> 'size'; the user's 'image/group' -> 'group'."""
    return feature.rsplit("/", 1)[-1]


def suspects(summary: dict) -> Optional[Verdict]:
    """Eval images whose given label the model doubts most (possible label errors)."""
    result = summary.get("suspects")
    if not result:
        return None
    flagged, method = result.get("flagged", 0), result.get("method", "")
    if not flagged:
        return Verdict("suspects", OK, f"No eval image looks mislabelled ({method})")
    return Verdict("suspects", WARN, f"{_count(flagged, 'eval image')} may be mislabelled "
                                     f"({method})")


def saliency(summary: dict) -> Optional[Verdict]:
    """Where the model looked: informational, no pass or fail."""
    result = summary.get("saliency")
    if not result or not result.get("images"):
        return None
    images = result["images"]
    wrong = sum(i.get("actual") != i.get("predicted") for i in images)
    layer = f", layer {result['layer']}" if result.get("layer") else ""
    return Verdict("saliency", INFO, f"Where the model looked ({result.get('method')}{layer}): "
                                     f"{_count(len(images), 'image')}, {wrong} misclassified, "
                                     "shown first")


def serving(summary: dict) -> Optional[Verdict]:
    """The Pusher's serving check: did a fresh process load and answer with the model?"""
    check = (summary.get("pushed") or {}).get("serving_check")
    if not check:
        return None
    if not check.get("ok"):
        return Verdict("serving", FAIL, f"Serving check FAILED, not pushed: {check['reason']}")
    if check.get("p50_ms") is None:
        return Verdict("serving", OK, f"Serving check passed: {check['reason']}")
    return Verdict("serving", OK, f"Serving check passed: {check.get('warmup_records', 0)} "
                                  f"warmup requests replayed, {check['rest_requests']} REST "
                                  f"requests p50 {check['p50_ms']:.1f} ms, "
                                  f"p99 {check['p99_ms']:.1f} ms")


def audit_verdicts(summary: dict) -> List[Verdict]:
    """The verdicts a run has, data health first, in the report's order."""
    found = (f(summary) for f in (data_health, leakage, suspects, robustness, slices))
    return [v for v in found if v is not None]


def overall(summary: dict) -> Verdict:
    """The page's first line: blessed and pushed, and which checks want a look."""
    evaluation, pushed = summary.get("eval") or {}, summary.get("pushed") or {}
    checks = [v for v in [*audit_verdicts(summary), serving(summary)] if v is not None]
    failed = [TITLES[v.name] for v in checks if v.status == FAIL]
    warned = [TITLES[v.name] for v in checks if v.status == WARN]
    if not evaluation.get("blessed"):
        return Verdict("overall", FAIL, f"Not blessed: {evaluation.get('reason')}")
    where = (f"pushed as version {pushed['version']}" if pushed.get("version") is not None
             else f"not pushed ({pushed.get('blocked') or 'see below'})")
    if (evaluation.get("threshold") or {}).get("within_chance"):
        where = "within chance of the threshold, " + where
    if failed:
        return Verdict("overall", FAIL, f"Blessed, {where}; failed: {', '.join(failed)}")
    if warned:
        return Verdict("overall", WARN, f"Blessed, {where}; look at: {', '.join(warned)}")
    passed = ", ".join(TITLES[v.name] for v in checks if v.status == OK)
    return Verdict("overall", OK, f"Blessed, {where}" + (f"; passed: {passed}" if passed
                                                           else ""))
