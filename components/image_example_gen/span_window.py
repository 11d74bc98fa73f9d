"""The span window: which spans a run ingests, listed once and handed on.

A span still being uploaded must not be ingested half-written. A span is ready when

- its folder holds `_SUCCESS`, the marker Hadoop's output committer writes into a
  folder once everything else is in it (Spark and many export jobs write it too); or
- none of its files changed for `span_quiet` seconds (`--span-quiet`); or
- it is one file (an .npz, a TFRecord file) in a bucket: an object store shows an
  object only once its upload is complete. A local file waits out `span_quiet`.

A span read at versions (`{VERSION}`) is read at its highest ready version. The window
is the latest `train_spans` ready spans, ending at `expected_span` (`--span`) when a
run names one.

Listed once: ImageExampleGen's driver resolves the window (each span's files are
listed once, for both their fingerprint and their newest time) and hands it to the
executor as an exec property; where no driver runs (Kubeflow), the executor resolves
it itself, once. The span store keys its entries by these fingerprints, so a run
ingests the files it listed, never a later listing's.
"""
import dataclasses
import hashlib
import json
import logging
import os
import time
from typing import Dict, List, Optional, Tuple

from core.storage import files
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.spans import Span, SpanPatternError, candidates

SUCCESS_FILE = "_SUCCESS"
_READY_RULE = (f"A span is ready once its folder holds a {SUCCESS_FILE} file, or none of its "
               "files changed for --span-quiet seconds")


@dataclasses.dataclass(frozen=True)
class ListedSpan:
    """A ready span as listed: a digest of its files, and its newest file's time (ns)."""

    span: Span
    fingerprint: str
    newest_ns: int


@dataclasses.dataclass(frozen=True)
class LeftOut:
    """A span, or one version of it, that was not ready, and why."""

    span: Span
    reason: str  # the same words from run to run: it is part of the cache key


@dataclasses.dataclass(frozen=True)
class SpanWindow:
    """What a run ingests: ready spans, oldest first; the span before the newest (the
    drift check's, ready or not); and what was left out as not ready."""

    spans: Tuple[ListedSpan, ...]
    previous: Optional[Span]
    left_out: Tuple[LeftOut, ...] = ()

    @property
    def newest(self) -> Span:
        """The span the window ends at."""
        return self.spans[-1].span

    def fingerprint(self) -> str:
        """The input fingerprint of the window: a new span, version or file changes it."""
        digest = hashlib.sha256("".join(f"{s.span.number}\0{s.span.version}\0{s.fingerprint}\n"
                                        for s in self.spans).encode())
        numbers = ",".join(str(s.span.number) for s in self.spans)
        return f"spans:{numbers},sha256:{digest.hexdigest()}"

    def to_json(self) -> str:
        """The window as an exec property."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "SpanWindow":
        """The inverse of `to_json`."""
        data = json.loads(text)
        return cls(tuple(ListedSpan(Span(**s["span"]), s["fingerprint"], s["newest_ns"])
                         for s in data["spans"]),
                   Span(**data["previous"]) if data["previous"] else None,
                   tuple(LeftOut(Span(**s["span"]), s["reason"]) for s in data["left_out"]))


def _listing(root: str) -> Tuple[List[files.FileInfo], bool]:
    """Every file of a dataset root with paths relative to it, and whether it is a folder.

    One listing with sizes and times: on a bucket, no request per object.
    """
    if not files.isdir(root):
        return [dataclasses.replace(files.stat(root), path=os.path.basename(root))], False
    return [dataclasses.replace(f, path=os.path.relpath(f.path, root))
            for f in files.walk_files(root)], True


def _data_files(found: List[files.FileInfo]) -> List[files.FileInfo]:
    # The marker arrives after the data: ingesting a span before it is written must
    # not make its arrival a change of the span.
    return [f for f in found if f.path != SUCCESS_FILE]


def fingerprint_files(found: List[files.FileInfo]) -> str:
    """A digest of (relative path, size, mtime ns) of each file, `_SUCCESS` aside."""
    data = _data_files(found)
    digest = hashlib.sha256()
    for info in data:
        digest.update(f"{info.path}\0{info.size}\0{info.mtime_ns}\n".encode("utf-8", "replace"))
    return f"files:{len(data)},sha256:{digest.hexdigest()}"


def tree_fingerprint(root: str) -> str:
    """`fingerprint_files` of every file under `root` (or of root, a file)."""
    return fingerprint_files(_listing(root)[0])


def _not_ready(found: List[files.FileInfo], folder: bool, remote: bool, quiet_s: int,
               now_ns: int) -> Optional[str]:
    """None when a span with these files is ready (see the module docstring), else why not."""
    data = _data_files(found)
    if len(data) < len(found) or (data and not folder and remote):
        return None
    if not data:
        return f"no files yet, and no {SUCCESS_FILE}"
    if now_ns - max(f.mtime_ns for f in data) >= quiet_s * 1_000_000_000:
        return None
    return f"no {SUCCESS_FILE}, and a file changed within --span-quiet ({quiet_s} s)"


def _ready_version(versions: List[Span], quiet_s: int,
                   left_out: List[LeftOut]) -> Optional[ListedSpan]:
    """The highest ready version of a span, listed; each one passed over joins `left_out`."""
    for span in versions:
        found, folder = _listing(span.root)
        now_ns = time.time_ns()  # after the listing: a file listed is never in the future
        why = _not_ready(found, folder, files.is_remote(span.root), quiet_s, now_ns)
        data = _data_files(found)
        newest = max((f.mtime_ns for f in data), default=0)
        if why is None:
            return ListedSpan(span, fingerprint_files(found), newest)
        left_out.append(LeftOut(span, why))
        age = f"; its newest file is {(now_ns - newest) / 1e9:.0f} s old" if data else ""
        _say(f"{span.name} left out, not ready: {why}{age} ({span.root})")
    return None


def _say(line: str) -> None:
    """A line of the run's output (the driver's or the step's), and the log."""
    print(f"          {line}", flush=True)
    logging.info("span window: %s", line)


def _numbers(pattern: str, found: Dict[int, List[Span]], span: Optional[int]) -> List[int]:
    """The span numbers a run may take: all, or those up to `--span`, which must exist."""
    if span is None:
        return list(found)
    if span not in found:
        raise SpanPatternError(f"--span {span}: --data {pattern} has no span {span} (it has "
                               f"{', '.join(map(str, found))})")
    return [number for number in found if number <= span]


def resolve(pattern: str, options: IngestOptions) -> SpanWindow:
    """The window of `pattern` for a run with `options`: the latest `train_spans` ready
    spans (0: all), ending at `expected_span` (`--span`) when given, each listed once.

    Raises:
      SpanPatternError: the pattern matches nothing, no span is ready, or `--span`
        names a span that is missing or not ready; the message names the flag.
    """
    found = candidates(pattern)
    chosen: List[ListedSpan] = []
    left_out: List[LeftOut] = []
    for number in reversed(_numbers(pattern, found, options.expected_span)):
        if options.train_spans and len(chosen) == options.train_spans:
            break
        listed = _ready_version(found[number], options.span_quiet, left_out)
        if listed is None and number == options.expected_span:
            raise SpanPatternError(
                f"--span {number}: span {number} ({found[number][0].root}) is not ready: "
                f"{left_out[-1].reason}. {_READY_RULE}")
        if listed is not None:
            chosen.insert(0, listed)
    if not chosen:
        reasons = "; ".join(f"{s.span.name}: {s.reason}" for s in left_out)
        raise SpanPatternError(f"--data {pattern}: no span is ready ({reasons}). {_READY_RULE}")
    earlier = [number for number in found if number < chosen[-1].span.number]
    return SpanWindow(tuple(chosen), found[earlier[-1]][0] if earlier else None,
                      tuple(reversed(left_out)))
