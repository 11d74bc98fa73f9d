"""Refuse, before anything heavy runs, a training that cannot fit in memory.

The estimate builds the model in a throw-away graph (its variables are never
allocated), then adds what training holds: weights with their gradients and
two Adam slots, a batch's activations kept for the backward pass and their
gradients, the decoded-image cache, and the process's own base.
"""
import dataclasses
import math
import os
from typing import Optional

from pipeline.planning import rules
from core.errors import UsageError
from pipeline.planning.plan import Plan

_GB = 1e9


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a training needs, by part, and the limit it is held against."""

    params: int
    weights_bytes: int  # weights, gradients and optimizer slots
    activation_bytes: int  # one batch, forward and backward
    cache_bytes: int
    base_bytes: int
    limit_bytes: int
    widest_trial: bool = False  # sized for the largest model a --tune search may train

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.activation_bytes + self.cache_bytes + self.base_bytes

    @property
    def allowed_bytes(self) -> int:
        return int(self.limit_bytes * rules.MEMORY_SHARE)


def memory_limit() -> int:
    """What this process may use: its cgroup's limit if set, else physical memory."""
    limits = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            limits.append(int(text))
    return min(limits)


def _layers(model):
    """Every layer, nested models (a backbone) flattened into theirs."""
    for layer in model.layers:
        if hasattr(layer, "layers"):
            yield from _layers(layer)
        else:
            yield layer


def _model_size(params, image_size: int, channels: int, classes: int):
    """(parameters, activation values per example), from a graph-mode build."""
    import dataclasses

    import tensorflow as tf

    from modules.networks.keras_model import build_model
    shape_only = dataclasses.replace(params, weights=None)  # no download, no file read
    with tf.Graph().as_default():
        built = build_model(shape_only, (image_size, image_size, channels), classes)
        activations = sum(math.prod(d or 1 for d in layer.output_shape[1:])
                          for layer in _layers(built)
                          if not isinstance(layer.output_shape, list))
        return built.count_params(), activations


def _widest(plan: Plan):
    """(TrainerParams of the largest model training may build, whether that is a search's
    trial): with --tune, the widest and deepest shape the search may try at the planned
    side, which it may pick for the Trainer too."""
    from modules.networks import space
    params = plan.trainer_params()
    if not plan.config.tuning.enabled:
        return params, False
    values = space.largest(params, plan.config.model.image_size)
    return (space.apply(params, values), True) if values else (params, False)


def estimate(plan: Plan, classes: int, limit: Optional[int] = None) -> MemoryEstimate:
    """What training `plan` needs; `limit` defaults to memory_limit()."""
    c = plan.config
    trained, widest = _widest(plan)
    params, activations = _model_size(trained, c.model.image_size, c.model.channels, classes)
    split_bytes = (plan.facts.train_examples or 0) * c.model.image_size ** 2 * c.model.channels * 4
    return MemoryEstimate(
        params=params,
        weights_bytes=params * 4 * 4,
        activation_bytes=activations * c.training.batch_size * 4 * 2,
        cache_bytes=min(plan.cache_bytes, split_bytes),
        base_bytes=rules.TRAINER_BASE_BYTES,
        limit_bytes=limit or memory_limit(), widest_trial=widest)


def check_fits(found: MemoryEstimate, plan: Plan) -> None:
    """Raises UsageError (exit 2) naming the flags to change, if training cannot fit."""
    if found.total_bytes <= found.allowed_bytes:
        return
    c = plan.config
    raise UsageError(
        f"training would need about {found.total_bytes / _GB:.1f} GB ({found.params:,} "
        f"weights: {found.weights_bytes / _GB:.1f} GB with gradients and optimizer slots; "
        f"a batch's activations: {found.activation_bytes / _GB:.1f} GB), more than the "
        f"{found.allowed_bytes / _GB:.1f} GB allowed here ({rules.MEMORY_SHARE:.0%} of "
        f"{found.limit_bytes / _GB:.1f} GB). Lower --image-size (now {c.model.image_size}) or "
        f"--batch-size (now {c.training.batch_size}), or choose a smaller --model (now "
        f"{c.model.network}; photo's weights do not grow with the image)"
        + (", or leave out --tune (sized for the widest model its search may try)"
           if found.widest_trial else ""))


def memory_line(found: MemoryEstimate) -> str:
    """The plan's memory line."""
    model = "weights, the widest model the search may try" if found.widest_trial else "weights"
    return (f"          memory: about {found.total_bytes / _GB:.1f} GB for training "
            f"({found.params:,} {model}) of {found.allowed_bytes / _GB:.1f} GB allowed")
