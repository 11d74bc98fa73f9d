"""Which pushed version the monitor judges, and what it is compared with.

The version is the one TF Serving serves (a rollback's pin, else the highest
complete one), or --version V. Its assets.extra/monitoring/ holds what the
pipeline wrote when it evaluated it (core/contract.py): the eval
split's answers (reference.json) and the train split's statistics.
"""
import dataclasses
import json
import os
from typing import List, Optional

from tensorflow_metadata.proto.v0 import statistics_pb2

from core.contract import (ASSETS_EXTRA, MONITORING_DIR, MONITOR_REFERENCE_FILE,
                           TRAIN_STATISTICS_FILE)
from core.storage import files
from components.image_pusher.versions import complete_versions, served_version
from core.errors import UsageError

_REFERENCE_KEYS = ("labels", "eval")
_EVAL_KEYS = ("accuracy", "predicted", "confidence", "label")


@dataclasses.dataclass
class Reference:
    """One pushed version and what the pipeline recorded about it."""

    version: int
    model_dir: str  # the SavedModel version folder
    labels: List[str]  # class names, label-id order
    answers: dict  # reference.json
    train: statistics_pb2.DatasetFeatureStatisticsList


def chosen_version(serving_dir: str, version: Optional[int]) -> int:
    """--version V if it is a complete pushed version, else the served one; UsageError
    naming --version or the serving folder when there is none."""
    if version is None:
        served = served_version(serving_dir)
        if served is None:
            raise UsageError(f"no pushed version in {serving_dir}: push a model first "
                             "(imagepipe run), or check --output and --model-name")
        return served
    pushed = complete_versions(serving_dir) if files.isdir(serving_dir) else []
    if version not in pushed:
        listed = ", ".join(str(v) for v in pushed[-5:]) or "none"
        raise UsageError(f"--version {version}: not a complete pushed version in "
                         f"{serving_dir} (latest there: {listed}; see imagepipe versions)")
    return version


def _answers(path: str) -> dict:
    try:
        found = json.loads(files.read_text(path))
        missing = [k for k in _REFERENCE_KEYS if k not in found] + [
            k for k in _EVAL_KEYS if k not in found.get("eval", {})]
    except (ValueError, AttributeError) as e:
        raise UsageError(f"{path}: not a monitoring reference ({e})") from None
    if missing:
        raise UsageError(f"{path}: not a monitoring reference (no {', '.join(missing)})")
    return found


def load_reference(serving_dir: str, version: Optional[int]) -> Reference:
    """The chosen version's model folder and its monitoring reference."""
    chosen = chosen_version(serving_dir, version)
    model_dir = os.path.join(serving_dir, str(chosen))
    folder = os.path.join(model_dir, ASSETS_EXTRA, MONITORING_DIR)
    paths = [os.path.join(folder, name) for name in (MONITOR_REFERENCE_FILE,
                                                     TRAIN_STATISTICS_FILE)]
    if not files.exists(paths[0]):
        raise UsageError(f"version {chosen} has no monitoring reference ({paths[0]} is "
                         "missing): it was pushed before imagepipe monitor existed; push a "
                         "new model with imagepipe run, or pick another with --version")
    answers = _answers(paths[0])
    if not files.exists(paths[1]):
        # reference.json says null where the Evaluator was given no statistics (a pipeline
        # compiled before it took StatisticsGen's output).
        why = ("its Evaluator was given no train statistics" if
               answers.get("train_statistics") is None else f"{paths[1]} is missing")
        raise UsageError(f"version {chosen}'s monitoring reference ({folder}) has no train "
                         f"statistics to compare inputs with: {why}; push a new model with a "
                         "pipeline compiled by this imagepipe, or pick another with --version")
    try:
        train = statistics_pb2.DatasetFeatureStatisticsList.FromString(
            files.read_bytes(paths[1]))
    except Exception as e:  # noqa: BLE001  (protobuf's DecodeError)
        raise UsageError(f"{paths[1]}: not TFDV statistics ({e})") from None
    if not train.datasets:
        raise UsageError(f"{paths[1]}: holds no statistics")
    return Reference(chosen, model_dir, [str(n) for n in answers["labels"]], answers, train)
