"""Which weights the Trainer may start from, read from the push destination: plain
functions, no TFX.

Why the push destination: open-source Kubeflow Pipelines cannot run TFX's
resolvers, so the ML Metadata query behind a local run's warm start
(components/resolvers/latest_blessed_earlier_data.py) cannot run there. The
version served now is the model in use; its provenance names the Model artifact
it was pushed from (`source_uri`), which kept its weights in `warm_start/`.

The served version, not the newest: after `imagepipe rollback` the pinned version
is the one that counts, and a version a rollback took out of service never is
(components/image_pusher/versions.py in_service, which PushedBaseline reads too). There
is no fallback to an older version: when the served one cannot start the Trainer,
it trains from scratch and says why.
"""
import dataclasses
import json
import os
from typing import Optional

from components.image_pusher.provenance import INFO_FILE, ORIGIN_FILE, WARM_START_DIR, WEIGHTS_FILE
from core.storage import files
from core.storage.tree_copy import copy_tree
from components.image_pusher.versions import complete_versions, in_service, provenance


@dataclasses.dataclass(frozen=True)
class Origin:
    """Where the weights come from; `folder` None: nothing to start from, `reason` says why."""

    version: Optional[int]  # the served version, once there is one
    source_uri: Optional[str]  # the Model artifact it was pushed from
    folder: Optional[str]  # that artifact's warm_start folder, when it holds weights
    reason: str

    def as_json(self) -> dict:
        """ORIGIN_FILE's content: "reason" only when there are no weights, for the Trainer
        to give as its own (the folder is the Trainer's own copy, so not in it)."""
        return {"version": self.version, "source_uri": self.source_uri,
                "reason": None if self.folder else self.reason}


def served_origin(serving_dir: str) -> Origin:
    """The warm-start folder of the Model artifact the served version was pushed from."""
    served = in_service(serving_dir)
    if not served:
        return Origin(None, None, None, "nothing pushed yet" if not complete_versions(
            serving_dir) else "no pushed version is in service")
    version = served[0]
    source = (provenance(os.path.join(serving_dir, str(version))) or {}).get("source_uri")
    if not source:
        return Origin(version, None, None, f"version {version} records no source model "
                                           "(pushed by something else)")
    folder = os.path.join(source.rstrip("/"), WARM_START_DIR)
    if not all(files.exists(os.path.join(folder, name)) for name in (WEIGHTS_FILE, INFO_FILE)):
        return Origin(version, source, None, f"version {version}'s model kept no weights "
                                             f"({folder} is gone or incomplete)")
    return Origin(version, source, folder, f"version {version}, the served one")


def fill(origin: Origin, output_uri: str) -> None:
    """Writes `<output_uri>/warm_start/`: a copy of the origin's folder, if any, and
    ORIGIN_FILE either way, so the Trainer can say which version it started from or why it
    started from scratch (FnArgs gives it the base model's path, not its properties)."""
    folder = os.path.join(str(output_uri), WARM_START_DIR)
    files.rmtree(folder)  # a retried step's URI may hold its first attempt's weights
    if origin.folder is not None:
        copy_tree(origin.folder, folder)
    files.write_text(os.path.join(folder, ORIGIN_FILE), json.dumps(origin.as_json()) + "\n")
