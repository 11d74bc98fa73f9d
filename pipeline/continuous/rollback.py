"""`imagepipe rollback`: serve an earlier pushed version again, and say so everywhere.

    imagepipe rollback --output outputs            # the served version's predecessor
    imagepipe rollback --output outputs --to 1717171717

What changes, and in which order: served.json (the pin, and the versions
taken out of service: components/common/versions.py ServingState), models.config
(a `specific` version policy, which TF Serving obeys on its next config
poll), the TFLite pointer, then ML Metadata (pipeline/continuous/
revocations.py), so that the next local run's baseline is the served model.
Each file is replaced whole; if any step fails, the files are put back as
they were, so a rollback happens entirely or not at all. The caller holds
the output's run lock (pipeline/commands.py), so no run pushes meanwhile.
"""
import contextlib
import dataclasses
import os
from typing import Dict, Iterator, List, Optional, Tuple

from components.image_pusher.serving_config import MODELS_CONFIG, write_serving_configs
from components.common.storage import files
from components.common.versions import (POINTER_FILE, SERVED_FILE, ServingState, complete_versions,
                                 point_tflite, provenance, served_version, serving_state,
                                 versions, write_serving_state)
from pipeline.config import PipelineConfig
from pipeline.continuous import revocations
from pipeline.errors import UsageError


@dataclasses.dataclass(frozen=True)
class RollbackPlan:
    """What a rollback will do: serve `to_version` instead of `from_version`."""

    from_version: int
    to_version: int
    revoked: Tuple[int, ...]  # versions above the target, now taken out of service
    restored: bool  # the target had been taken out of service by an earlier rollback
    state: ServingState  # the model's new entry in served.json


def _default_target(complete: List[int], served: int, state: ServingState) -> int:
    """The served version's predecessor: the newest complete version below it that a
    rollback did not take out of service."""
    earlier = [v for v in complete if v < served and v not in state.rolled_back]
    if not earlier:
        raise UsageError(f"version {served} is served and no earlier version can be: "
                         "nothing to roll back to (give --to VERSION to choose one)")
    return earlier[-1]


def _check_target(to: int, serving_dir: str, complete: List[int], served: int) -> None:
    """Refuses a --to that names no version, an incomplete one, or the served one."""
    if to not in versions(serving_dir, complete_only=False):
        raise UsageError(f"--to {to}: no such version in {serving_dir} (versions: "
                         f"{', '.join(map(str, complete)) or 'none'})")
    if to not in complete:
        raise UsageError(f"--to {to}: version {to} is incomplete (no saved_model.pb: a push "
                         "that never finished); choose a complete one (imagepipe versions)")
    if to == served:
        raise UsageError(f"--to {to}: version {to} is already the one served")


def plan_rollback(serving_dir: str, to: Optional[int]) -> RollbackPlan:
    """The rollback to version `to` (None: the served version's predecessor), or a
    UsageError naming the flag or version that cannot be."""
    complete = complete_versions(serving_dir)
    if not complete:
        raise UsageError(f"--output: no complete version in {serving_dir}: nothing to roll "
                         "back to")
    state, served = serving_state(serving_dir), served_version(serving_dir)
    if to is None:
        to = _default_target(complete, served, state)
    else:
        _check_target(to, serving_dir, complete, served)
    above = tuple(v for v in complete if v > to)
    rolled_back = tuple(sorted((set(state.rolled_back) | set(above)) - {to}))
    return RollbackPlan(served, to, tuple(v for v in above if v not in state.rolled_back),
                        to in state.rolled_back, ServingState(to, rolled_back))


def _paths(config: PipelineConfig) -> List[str]:
    """The files a rollback writes."""
    root = os.path.dirname(config.serving_dir)
    return [os.path.join(root, SERVED_FILE), os.path.join(root, MODELS_CONFIG),
            os.path.join(config.tflite_dir, POINTER_FILE)]


@contextlib.contextmanager
def _all_or_nothing(paths: List[str]) -> Iterator[None]:
    """Puts `paths` back as they were (content, or absence) if the block fails."""
    saved: Dict[str, Optional[bytes]] = {
        p: files.read_bytes(p) if files.exists(p) else None for p in paths}
    try:
        yield
    except BaseException:
        for path, data in saved.items():
            if data is None:
                files.remove(path)
            else:
                files.write_bytes(path, data)
        raise


def _changed_models(store, config: PipelineConfig, plan: RollbackPlan) -> list:
    """(version, Model artifact, revoked?) for each model whose service the plan changes."""
    changed = {v: True for v in plan.revoked}
    if plan.restored:
        changed[plan.to_version] = False
    sources = {v: (provenance(os.path.join(config.serving_dir, str(v))) or {}).get("source_uri")
               for v in changed}
    models = revocations.find_models(store, {v: uri for v, uri in sources.items() if uri})
    return [(v, models[v], changed[v]) for v in sorted(models)]


def rollback(config: PipelineConfig, to: Optional[int]) -> RollbackPlan:
    """Rolls `config.model_name` back to version `to` (None: the served one's predecessor);
    returns the plan carried out. The caller holds the output's run lock."""
    plan = plan_rollback(config.serving_dir, to)
    store, changed = None, []
    if os.path.exists(config.metadata_path):  # the models are found before anything is written
        store = revocations.open_store(config.metadata_path)
        changed = _changed_models(store, config, plan)
    with _all_or_nothing(_paths(config)):
        write_serving_state(config.serving_dir, plan.state)
        write_serving_configs(os.path.dirname(config.serving_dir))
        point_tflite(config.tflite_dir, config.serving_dir)
        if store is not None:  # last: one transaction, and the files are put back if it fails
            revocations.record_rollback(store, config.pipeline_name, config.pipeline_root,
                                        config.model_name, (plan.from_version, plan.to_version),
                                        changed)
    return plan


def describe(plan: RollbackPlan, config: PipelineConfig) -> str:
    """What the rollback did, for the terminal."""
    lines = [f"rollback  {config.model_name}: serving version {plan.to_version} "
             f"(was {plan.from_version}); pinned in {os.path.dirname(config.serving_dir)}/"
             f"{MODELS_CONFIG}"]
    if plan.revoked:
        lines.append(f"          taken out of service: {', '.join(map(str, plan.revoked))} "
                     "(never a baseline, never pushed again)")
    if plan.restored:
        lines.append(f"          version {plan.to_version} was rolled back before; it is "
                     "served again")
    lines.append("          the next push of a new model lifts the pin")
    return "\n".join(lines)
