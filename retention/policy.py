"""What `imagepipe gc` keeps and deletes, decided from listings alone: no I/O here.

Kept, each with its reason: the served version, the pinned one and the N newest complete
ones; the TFLite versions with the same numbers and the one CURRENT names; the run (or,
locally, the lineage) behind each kept version's model; the newest run; every complete
span entry. Then anything with a file modified within --min-age, whatever it is: a
pipeline that takes no lock here (a compiled run on a cluster) may be writing it.
The rest is deleted, each unit whole, with the reason it is not needed.
"""
import dataclasses
from typing import Callable, Dict, List, Optional, Sequence

from retention.inventory import (ARTIFACT, ATTEMPT, PARTIAL, RUN, SPAN_ENTRY, TFLITE,
                                 VERSION, Unit)

YOUNG = "modified within --min-age: a running pipeline may be writing it"


@dataclasses.dataclass(frozen=True)
class Facts:
    """What decides besides the units: the kept versions and what they need."""

    versions: Dict[int, str]  # kept version -> why (kept_versions)
    sources: Dict[int, str]  # kept version -> the Model artifact's URI it was pushed from
    tflite_current: Optional[int] = None  # the version the TFLite CURRENT pointer names
    lineage: Dict[str, str] = dataclasses.field(default_factory=dict)  # local URI -> why
    keep_versions: int = 3


@dataclasses.dataclass(frozen=True)
class Decision:
    """One unit, kept or deleted, and why."""

    unit: Unit
    keep: bool
    reason: str


def kept_versions(complete: Sequence[int], served: Optional[int], pinned: Optional[int],
                  keep: int) -> Dict[int, str]:
    """{version: why it is kept}: the served one, the pinned one, the `keep` newest
    complete ones (the candidates a rollback would choose from)."""
    reasons: Dict[int, List[str]] = {}
    if served is not None:
        reasons.setdefault(served, []).append("served")
    if pinned is not None:
        reasons.setdefault(pinned, []).append("pinned by a rollback")
    for version in sorted(complete)[-keep:]:
        reasons.setdefault(version, []).append(f"one of the {keep} newest")
    return {v: "; ".join(why) for v, why in sorted(reasons.items())}


def holds(path: str, uri: str) -> bool:
    """Whether `uri` is the folder `path` or lies under it."""
    path = path.rstrip("/")
    return uri.rstrip("/") == path or uri.startswith(path + "/")


def _source_in(unit: Unit, facts: Facts) -> Optional[int]:
    """The newest kept version whose model lies in the unit, or None."""
    found = [v for v, uri in facts.sources.items() if uri and holds(unit.path, uri)]
    return max(found) if found else None


def _keep_version(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    return facts.versions.get(unit.version) if unit.complete else None


def _keep_tflite(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    reasons = []
    if unit.version is not None and unit.version == facts.tflite_current:
        reasons.append("the TFLite CURRENT pointer names it")
    if unit.complete and unit.version in facts.versions:
        reasons.append(f"goes with kept version {unit.version}")
    return "; ".join(reasons) or None


def _keep_entry(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    return "a complete span entry: later runs reuse it" if unit.complete else None


def _keep_run(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    version = _source_in(unit, facts)
    if version is not None:
        return f"the run of kept version {version}'s model"
    return "the newest run" if unit.path == newest_run else None


def _keep_artifact(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    if unit.path in facts.lineage:
        return facts.lineage[unit.path]
    version = _source_in(unit, facts)
    return None if version is None else f"kept version {version}'s model"


def _never(unit: Unit, facts: Facts, newest_run: Optional[str]) -> Optional[str]:
    return None


# Why a unit of each kind is kept, or None: one rule per kind.
KEEP_RULES: Dict[str, Callable[[Unit, Facts, Optional[str]], Optional[str]]] = {
    VERSION: _keep_version, TFLITE: _keep_tflite, PARTIAL: _never, SPAN_ENTRY: _keep_entry,
    ATTEMPT: _never, RUN: _keep_run, ARTIFACT: _keep_artifact}


def delete_reason(unit: Unit, facts: Facts) -> str:
    """Why a unit that nothing keeps is not needed."""
    if unit.kind in (VERSION, TFLITE) and not unit.complete:
        return "incomplete: a push that never finished"
    return {
        VERSION: f"older than the {facts.keep_versions} newest, neither served nor pinned",
        TFLITE: "its SavedModel version is not kept",
        PARTIAL: "the hidden copy of a push that never finished",
        SPAN_ENTRY: "no ingestion completed it (no _COMPLETE marker)",
        ATTEMPT: "an ingestion attempt never published (killed, or another run's won)",
        RUN: "an older run",
        ARTIFACT: ("an older run's artifact" if unit.recorded
                   else "not in ML Metadata: left by an interrupted run"),
    }[unit.kind]


def newest_run(units: Sequence[Unit]) -> Optional[str]:
    """The compiled run folder with the newest file: the run a user inspects."""
    runs = [u for u in units if u.kind == RUN and u.newest is not None]
    return max(runs, key=lambda u: (u.newest, u.path)).path if runs else None


def decide(units: Sequence[Unit], facts: Facts, min_age_s: float,
           now: float) -> List[Decision]:
    """A decision for every unit, in the order given."""
    latest = newest_run(units)
    decisions = []
    for unit in units:
        reason = KEEP_RULES[unit.kind](unit, facts, latest)
        if reason is None and _young(unit, min_age_s, now):
            reason = YOUNG
        keep = reason is not None
        decisions.append(Decision(unit, keep, reason if keep else delete_reason(unit, facts)))
    return decisions


def _young(unit: Unit, min_age_s: float, now: float) -> bool:
    return min_age_s > 0 and unit.newest is not None and now - unit.newest < min_age_s
