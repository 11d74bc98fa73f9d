"""One-line verdicts on a run's summary: can this model be trusted, and if not, why.

Pure functions of summary.json. The report opens each section with one and
the page with `overall`; the console prints them after a run. A verdict is
None where its input is absent (an older run, a model that was not audited).
"""
import dataclasses
from typing import List, Optional

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


def accuracy_text(evaluation: dict) -> str:
    """The run's accuracy, led by the figure its blessing was judged on: without the eval
    images that have a copy in train whenever there are any (and any are left)."""
    accuracy, without = evaluation.get("accuracy"), evaluation.get("accuracy_without_leaked")
    leaked, baseline = evaluation.get("leaked"), evaluation.get("baseline_accuracy")
    examples = (evaluation.get("audit") or {}).get("examples")
    if leaked and without is not None:
        size = f"n={examples - leaked:,}; " if examples is not None else ""
        text = (f"{without:.4f} without {_count(leaked, 'leaked eval image')} "
                f"({size}{'n/a' if accuracy is None else f'{accuracy:.4f}'} with)")
    else:
        text = "n/a" if accuracy is None else f"{accuracy:.4f}"
    return text + ("" if baseline is None else f" (baseline {baseline:.4f})")


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
    text = (f"Worst slice {slice_name(worst['feature'])}={worst['value']}: "
            f"{worst['accuracy']:.3f} on {_count(worst['examples'], 'image')}")
    if result.get("gap") is not None:
        text += f", {result['gap']:.3f} below overall {result['overall']:.3f}{_limit(gate)}"
    return Verdict("slices", _gated(gate, INFO), text)


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
    if failed:
        return Verdict("overall", FAIL, f"Blessed, {where}; failed: {', '.join(failed)}")
    if warned:
        return Verdict("overall", WARN, f"Blessed, {where}; look at: {', '.join(warned)}")
    passed = ", ".join(TITLES[v.name] for v in checks if v.status == OK)
    return Verdict("overall", OK, f"Blessed, {where}" + (f"; passed: {passed}" if passed
                                                           else ""))
