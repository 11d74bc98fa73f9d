"""Which pushed version is the baseline: plain functions, no TFX.

Why the push destination: open-source Kubeflow Pipelines does not implement
TFX's resolver executors, so the ML Metadata query behind the local
baseline (components/baseline_resolver) cannot run there. Every version in the
serving base directory was blessed (nothing else is pushed), so its newest
version is the last blessed model, as long as nothing but this pipeline
pushes there. Like the local strategy, the candidate's own push is skipped: a
cached re-run then compares against the model blessed before it.
"""
import os
from typing import Optional

from components.versions import is_complete, provenance, versions


def latest_other_than(serving_dir: str, candidate_uri: str) -> Optional[str]:
    """The newest complete version folder not pushed from `candidate_uri`, or None."""
    for version in reversed(versions(serving_dir)):
        path = os.path.join(serving_dir, str(version))
        record = provenance(path)
        if record and record.get("source_uri") == candidate_uri:
            continue
        if is_complete(path):
            return path
    return None
