"""--groups: a CSV of `path,group` rows giving each listed image its group.

Paths are relative to --data, as `image/filename` holds them. A header row
(`path,group`) is optional. Images not listed carry no group feature.
"""
import csv
import hashlib
import io
from typing import Collection, Dict, Optional

from core.storage import files

_HEADER = ["path", "group"]


def _text(uri: str) -> str:
    try:
        return files.read_text(uri)
    except Exception as e:  # noqa: BLE001 (local and gs:// raise different types)
        raise ValueError(f"--groups {uri}: cannot read it: {e}") from None


def read_groups(uri: str, known: Optional[Collection[str]] = None) -> Dict[str, str]:
    """{relpath: group} from the CSV at `uri` (a path or gs:// URI).

    `known`: the data's paths; a row naming another path is an error (None:
    not checked).

    Raises:
      ValueError: unreadable file, malformed row or unknown path, naming the
        file and line.
    """
    groups: Dict[str, str] = {}
    for line, row in enumerate(csv.reader(io.StringIO(_text(uri))), start=1):
        if not row or (line == 1 and [c.strip().lower() for c in row] == _HEADER):
            continue
        where = f"--groups {uri}, line {line}"
        if len(row) != 2 or not row[0].strip() or not row[1].strip():
            raise ValueError(f"{where}: expected `path,group`, got {','.join(row)!r}")
        path, group = row[0].strip(), row[1].strip()
        if known is not None and path not in known:
            raise ValueError(f"{where}: {path} is not an image of the data")
        if groups.get(path, group) != group:
            raise ValueError(f"{where}: {path} is given two groups, {groups[path]} and {group}")
        groups[path] = group
    return groups


def groups_digest(uri: Optional[str]) -> str:
    """A digest of the groups file's content ("" without one): editing it re-ingests."""
    if not uri:
        return ""
    return hashlib.sha256(_text(uri).encode("utf-8")).hexdigest()[:16]
