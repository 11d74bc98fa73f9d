"""JSON lines, as the JSON-lines readers (kserve, vertex, rest, imagepipe) take them.

One object a line, streamed; a line that is a JSON array (KServe's blob-store
logger writes a batch as one array) gives one object per element. A line that
does not parse becomes a BadRecord naming FILE:LINE, and the file goes on.
"""
import dataclasses
import json
from typing import Callable, Iterable, Iterator, Union

from core.storage import files
from monitor.records import BadRecord, Item


@dataclasses.dataclass(frozen=True)
class Line:
    """One JSON object of a file, and where it stands: FILE:LINE (FILE:LINE[i] in an array)."""

    id: str
    value: dict


def json_lines(paths: Iterable[str]) -> Iterator[Union[Line, BadRecord]]:
    """Every object of every file, in order; blank lines are skipped."""
    for path in paths:
        try:
            with files.open_file(path, "rb") as f:
                for number, raw in enumerate(f, 1):
                    if raw.strip():
                        yield from _objects(f"{path}:{number}", raw)
        except Exception as e:  # noqa: BLE001  (OSError, TensorFlow's or the store's errors)
            yield BadRecord(path, f"unreadable: {type(e).__name__}: {e}")


def each_object(paths: Iterable[str],
                read: Callable[["Line"], Iterable[Item]]) -> Iterator[Item]:
    """`read(line)`'s records for every object of every file; a line that does not
    parse is a BadRecord in its place."""
    for line in json_lines(paths):
        if isinstance(line, BadRecord):
            yield line
        else:
            yield from read(line)


def _objects(where: str, raw: bytes) -> Iterator[Union[Line, BadRecord]]:
    try:
        value = json.loads(raw)
    except ValueError as e:  # UnicodeDecodeError is one too
        yield BadRecord(where, f"not JSON: {e}")
        return
    many = isinstance(value, list)
    for i, item in enumerate(value if many else [value]):
        at = f"{where}[{i}]" if many else where
        yield Line(at, item) if isinstance(item, dict) else BadRecord(
            at, f"not a JSON object: {type(item).__name__}")
