"""Span patterns: `--data` with `{SPAN}` (and `{VERSION}`) names a series of datasets.

`gs://b/photos/span-{SPAN}` or `~/photos/{SPAN}/v{VERSION}` match one dataset
root per span, as TFX's input config patterns do: the span and version are
the digits in place of the placeholders; a span's latest version is its
data. Listing goes through core/storage, so a bucket works as a
folder does.

TFX's ExampleGen resolves one span per run (tensorflow/tfx#5462), and its
span resolvers do not compile for open-source Kubeflow Pipelines; ImageExampleGen
therefore lists spans itself, here, on every orchestrator. Which of them are
ready, and which a run ingests, is span_window.py's to say.
"""
import dataclasses
import os
import re
from typing import Dict, List, Optional

from components.image_example_gen.readers.folder_tree import DatasetError
from core.storage import files

SPAN, VERSION = "{SPAN}", "{VERSION}"


class SpanPatternError(DatasetError):
    """A `--data` pattern that cannot name spans, or that matches none."""


@dataclasses.dataclass(frozen=True)
class Span:
    """One span's dataset root, with its number and (latest) version."""

    number: int
    version: Optional[int]
    root: str

    @property
    def name(self) -> str:
        return f"span {self.number}" + ("" if self.version is None else f" v{self.version}")


def is_pattern(data: str) -> bool:
    """Whether `--data` names spans rather than one dataset."""
    return SPAN in str(data) or VERSION in str(data)


def check_pattern(pattern: str) -> None:
    """Refuses patterns whose spans could not be told apart, naming the flag."""
    if pattern.count(SPAN) != 1:
        raise SpanPatternError(f"--data {pattern}: a span pattern needs {SPAN} exactly once")
    if pattern.count(VERSION) > 1:
        raise SpanPatternError(f"--data {pattern}: {VERSION} may appear at most once")
    for part in _parts(pattern):
        if "*" in part or "?" in part:
            raise SpanPatternError(f"--data {pattern}: only {SPAN} and {VERSION} may vary, "
                                   "not wildcards")


def _parts(pattern: str) -> List[str]:
    return [p for p in pattern.rstrip("/").split("/")]


def _regex(part: str) -> "re.Pattern":
    text = re.escape(part).replace(re.escape(SPAN), r"(?P<span>\d+)")
    return re.compile("^" + text.replace(re.escape(VERSION), r"(?P<version>\d+)") + "$")


def _first_varying(parts: List[str]) -> int:
    return next(i for i, p in enumerate(parts) if SPAN in p or VERSION in p)


def base_of(pattern: str) -> str:
    """The folder above the first part with a placeholder: what must exist and be readable."""
    parts = _parts(os.path.expanduser(pattern))
    # "" before the first varying part: a relative pattern's base is ".", "/x" -> "/".
    return "/".join(parts[:_first_varying(parts)]) or (
        "/" if pattern.startswith("/") else ".")


def _matches(pattern: str) -> List[tuple]:
    """(root, {"span": .., "version": ..}) for every existing path the pattern matches."""
    parts = _parts(os.path.expanduser(pattern))
    first = _first_varying(parts)
    found = [(base_of(pattern), {})]
    for part in parts[first:]:
        regex, grown = _regex(part), []
        for parent, groups in found:
            if not files.isdir(parent):
                continue
            if not (SPAN in part or VERSION in part):
                grown.append((os.path.join(parent, part), groups))
                continue
            folders, names = files.list_dir(parent)
            for name in folders + names:
                match = regex.match(name)
                if match:
                    grown.append((os.path.join(parent, name), {**groups, **match.groupdict()}))
        found = grown
    return [(root, groups) for root, groups in found if files.exists(root)]


def candidates(pattern: str) -> Dict[int, List[Span]]:
    """{span number: its versions, highest first} for every span the pattern matches.

    Raises SpanPatternError if it matches nothing.
    """
    check_pattern(pattern)
    found: Dict[int, List[Span]] = {}
    for root, groups in _matches(pattern):
        version = int(groups["version"]) if groups.get("version") is not None else None
        found.setdefault(int(groups["span"]), []).append(Span(int(groups["span"]), version, root))
    if not found:
        raise SpanPatternError(f"--data {pattern}: no span matches; {SPAN} stands for the "
                               "digits of a span number, e.g. span-1, span-2")
    return {number: sorted(versions, key=lambda s: s.version or 0, reverse=True)
            for number, versions in sorted(found.items())}


def list_spans(pattern: str) -> List[Span]:
    """Every span the pattern matches, oldest first, each at its latest version.

    Raises SpanPatternError if it matches nothing.
    """
    return [versions[0] for versions in candidates(pattern).values()]


def select(spans: List[Span], count: int) -> List[Span]:
    """The latest `count` spans (0: all), oldest first."""
    return list(spans) if count <= 0 else list(spans)[-count:]


def window(pattern: str, count: int) -> List[Span]:
    """The latest `count` of the pattern's spans (0: all), ready or not. What a run
    ingests is span_window.resolve's window: ready spans only, up to `--span`."""
    return select(list_spans(pattern), count)
