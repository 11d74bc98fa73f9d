"""Which pushed version is the baseline: plain functions, no TFX.

Why the push destination: open-source Kubeflow Pipelines does not implement
TFX's resolver executors, so the ML Metadata query behind the local
baseline (components/resolvers/) cannot run there. Every version in the
serving base directory was blessed (nothing else is pushed), so its newest
version is the last blessed model, as long as nothing but this pipeline
pushes there. Like the local strategy, the candidate's own push is skipped: a
cached re-run then compares against the model blessed before it.

Rollbacks (components/image_pusher/versions.py ServingState): the served version is the
newest that counts, so a version above a pin is no baseline, and neither is
a version a rollback took out of service, even after a later push lifted the pin.
"""
import os
from typing import Optional

from components.image_pusher.versions import in_service, provenance


def latest_other_than(serving_dir: str, candidate_uri: str) -> Optional[str]:
    """The newest complete version folder, not above the served one, not rolled back and
    not pushed from `candidate_uri`; or None."""
    for version in in_service(serving_dir):
        path = os.path.join(serving_dir, str(version))
        record = provenance(path)
        if not record or record.get("source_uri") != candidate_uri:
            return path
    return None
