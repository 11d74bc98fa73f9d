"""What `imagepipe gc` prints: each version and run kept or deleted, every deleted unit
with its size and reason, the totals, and whether anything was deleted."""
from typing import Dict, List, Tuple

from retention.inventory import ARTIFACT, RUN, SPAN_ENTRY, TFLITE, VERSION
from retention.policy import YOUNG, Decision
from retention.sweep import GcPlan
from settings.command_sections import NO_MIN_AGE

_SHOWN_ONE_BY_ONE = (VERSION, TFLITE, RUN)  # few; the other kinds are counted when kept
_COUNTED = {SPAN_ENTRY: ("span entry", "span entries"), ARTIFACT: ("artifact", "artifacts")}


def human_size(size: int) -> str:
    """1536 -> '1.5 KiB'."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _relative(path: str, output: str) -> str:
    top = output.rstrip("/") + "/"
    return path[len(top):] if path.startswith(top) else path


def _line(action: str, what: str, size: int, reason: str) -> str:
    return f"{action:9} {what:58} {human_size(size):>10}  {reason}"


def _kept_lines(plan: GcPlan, output: str) -> List[str]:
    lines: List[str] = []
    counted: Dict[str, Tuple[int, int, List[str]]] = {}  # kind -> count, bytes, reasons
    for decision in (d for d in plan.decisions if d.keep):
        unit = decision.unit
        if unit.kind in _SHOWN_ONE_BY_ONE or decision.reason == YOUNG:
            lines.append(_line("keep", f"{unit.kind} {_relative(unit.path, output)}",
                               unit.size, decision.reason))
            continue
        count, size, reasons = counted.get(unit.kind, (0, 0, []))
        why = decision.reason.split(" (run ")[0]  # lineage reasons name the run: once a kind
        counted[unit.kind] = (count + 1, size + unit.size,
                              reasons + ([why] if why not in reasons else []))
    for kind, (count, size, reasons) in counted.items():
        one, many = _COUNTED.get(kind, (kind, kind + "s"))
        lines.append(_line("keep", f"{count} {one if count == 1 else many}", size,
                           "; ".join(reasons)))
    return lines


def _doomed_line(decision: Decision, output: str) -> str:
    unit = decision.unit
    return _line("delete", f"{unit.kind} {_relative(unit.path, output)}", unit.size,
                 decision.reason)


def describe(plan: GcPlan, output: str, keep_versions: int, min_age: str,
             deleted: bool, marked: int = 0) -> str:
    """The lines for the terminal, ending with whether anything was deleted."""
    served = "none" if plan.served is None else str(plan.served)
    age = "no min age" if min_age == NO_MIN_AGE else f"min age {min_age}"
    lines = [f"gc        {output}: served version {served}; keeping the {keep_versions} "
             f"newest versions; {age}"]
    lines += _kept_lines(plan, output)
    lines += [_doomed_line(d, output) for d in plan.doomed]
    doomed, count = plan.doomed_bytes, len(plan.doomed)
    verb = "deleted" if deleted else "to delete"
    lines.append(f"total     before {human_size(plan.total)}, kept "
                 f"{human_size(plan.total - doomed)}, {verb} {human_size(doomed)} "
                 f"({count} folder{'' if count == 1 else 's'})")
    lines += [f"note      {note}" for note in plan.notes]
    if deleted:
        lines.append(f"deleted   {count} folder{'' if count == 1 else 's'}; {marked} ML "
                     "Metadata record(s) marked DELETED")
    else:
        lines.append("dry run   nothing was deleted: add --yes to delete the folders above"
                     if count else "dry run   nothing to delete")
    return "\n".join(lines)

