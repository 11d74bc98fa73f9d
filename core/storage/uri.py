"""What a path names: a local file, or an object on a store with a scheme (gs://, s3://).

The one place that tells the two apart; everything else asks through
files.py, which exports these functions (`files.is_remote`, ...).
"""
import os
import re
from typing import Optional

# A scheme as TensorFlow parses one (tensorflow/core/platform/path.cc, ParseURI),
# so that files.py sends to tf.io.gfile exactly the paths it would not read as
# local: a letter, then letters, digits and dots, then "://" at the start.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9.]*)://")
# Object stores whose first path part is a bucket, which access.py checks first.
BUCKET_SCHEMES = ("gs", "s3")
_WILDCARDS = "*?["


def scheme(path: str) -> Optional[str]:
    """The scheme of a URI ('gs' for gs://b/x); None for a local path."""
    match = _SCHEME.match(str(path))
    return match.group(1) if match else None


def is_remote(path: str) -> bool:
    """True for URIs with a scheme (gs://, s3://, ram://, ...); False for local paths."""
    return scheme(path) is not None


def has_buckets(path: str) -> bool:
    """True for a path on an object store with buckets (gs://, s3://)."""
    return scheme(path) in BUCKET_SCHEMES


def bucket_of(uri: str) -> Optional[str]:
    """`gs://bucket/...` -> `gs://bucket`; None for local paths."""
    found = scheme(uri)
    if found is None:
        return None
    rest = uri[len(found) + len("://"):]
    return f"{found}://{rest.split('/', 1)[0]}"


def has_wildcards(path: str) -> bool:
    """Whether `path` is a glob pattern (`*`, `?` or `[...]`)."""
    return any(c in path for c in _WILDCARDS)


def absolute(path: str) -> str:
    """A local path made absolute (and `~` expanded), so that TFX artifacts do not depend
    on the working directory; a URI unchanged."""
    return path if is_remote(path) else os.path.abspath(os.path.expanduser(path))
