"""`imagepipe rollback`: serve an earlier pushed version again, and say so everywhere.

    imagepipe rollback --output outputs            # the served version's predecessor
    imagepipe rollback --output outputs --to 1717171717

What changes, and in which order: served.json (the pin, and the versions
taken out of service: components/image_pusher/versions.py ServingState), models.config
(a `specific` version policy, which TF Serving obeys on its next config
poll), the TFLite pointer, then ML Metadata (rollback/
revocations.py), so that the next local run's baseline is the served model.
Each file is replaced whole (one object each on a bucket); if any step
fails, the files are put back as they were, so a rollback happens entirely
or not at all. The caller holds the output's locks (cli/commands.py).

A compiled (Kubeflow, Vertex) pipeline's push destination, `--output` its
--pipeline-root, has no local ML Metadata store: its metadata lives in the
cluster, out of reach. The record is left out there. On the kubeflow target
the pin holds without it: the baseline step reads served.json itself
(components/pushed_baseline/latest.py). Vertex's stock resolver reads only
Vertex's store, so a Vertex run's baseline does not see the rollback.
"""
import contextlib
import dataclasses
import os
from typing import Dict, Iterator, List, Optional, Tuple

from components.image_pusher.serving_config import MODELS_CONFIG, write_serving_configs
from core.storage import files
from components.image_pusher.versions import (
    POINTER_FILE, SERVED_FILE, ServingState, complete_versions, point_tflite, provenance,
    served_version, serving_state, versions, write_serving_state)
from settings.config import PipelineConfig
from core.errors import UsageError


@dataclasses.dataclass(frozen=True)
class RollbackPlan:
    """What a rollback will do: serve `to_version` instead of `from_version`."""

    from_version: int
    to_version: int
    revoked: Tuple[int, ...]  # versions above the target, now taken out of service
    restored: bool  # the target had been taken out of service by an earlier rollback
    state: ServingState  # the model's new entry in served.json
    recorded: bool = False  # in a local ML Metadata store (none for a compiled pipeline)


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
    from rollback import revocations
    changed = {v: True for v in plan.revoked}
    if plan.restored:
        changed[plan.to_version] = False
    sources = {v: (provenance(os.path.join(config.serving_dir, str(v))) or {}).get("source_uri")
               for v in changed}
    models = revocations.find_models(store, {v: uri for v, uri in sources.items() if uri})
    return [(v, models[v], changed[v]) for v in sorted(models)]


def rollback(config: PipelineConfig, to: Optional[int]) -> RollbackPlan:
    """Rolls `config.run.model_name` back to version `to` (None: the served one's predecessor);
    returns the plan carried out. The caller holds the output's locks."""
    plan = plan_rollback(config.serving_dir, to)
    store, changed = None, []
    if os.path.exists(config.metadata_path):  # the models are found before anything is written
        # Here only: TFX's resolvers load with it (seconds), which a compiled pipeline's
        # rollback, with no store, does without.
        from rollback import revocations
        store = revocations.open_store(config.metadata_path)
        changed = _changed_models(store, config, plan)
    with _all_or_nothing(_paths(config)):
        write_serving_state(config.serving_dir, plan.state)
        write_serving_configs(os.path.dirname(config.serving_dir))
        point_tflite(config.tflite_dir, config.serving_dir)
        if store is not None:  # last: one transaction, and the files are put back if it fails
            revocations.record_rollback(store, config.run.pipeline_name, config.pipeline_root,
                                        config.run.model_name, (plan.from_version, plan.to_version),
                                        changed)
    return dataclasses.replace(plan, recorded=store is not None)


def describe(plan: RollbackPlan, config: PipelineConfig) -> str:
    """What the rollback did, for the terminal."""
    lines = [f"rollback  {config.run.model_name}: serving version {plan.to_version} "
             f"(was {plan.from_version}); pinned in {os.path.dirname(config.serving_dir)}/"
             f"{MODELS_CONFIG}"]
    if plan.revoked:
        lines.append(f"          taken out of service: {', '.join(map(str, plan.revoked))} "
                     "(never a baseline, never pushed again)")
    if plan.restored:
        lines.append(f"          version {plan.to_version} was rolled back before; it is "
                     "served again")
    lines.append("          the next push of a new model lifts the pin")
    return "\n".join(lines + _what_follows(plan, config))


def _what_follows(plan: RollbackPlan, config: PipelineConfig) -> List[str]:
    """Who sees the rollback: local runs through ML Metadata, compiled ones through
    served.json; and, on a bucket, who was not held off."""
    if plan.recorded:
        return [f"          recorded in ML Metadata ({config.metadata_path}): the next "
                "local run's baseline and warm start follow"]
    if not files.is_remote(config.run.output):
        return ["          no ML Metadata store here (no local run made one): nothing "
                "recorded there"]
    return ["          no local ML Metadata for this output, so not recorded there: a "
            "--target kubeflow",
            "          run's baseline reads served.json; a --target vertex run's (Vertex "
            "ML Metadata) does not see it",
            "          a Kubeflow or Vertex run pushing to this bucket is not held off: "
            "pause its recurring run while you roll back"]
