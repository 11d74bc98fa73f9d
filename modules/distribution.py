"""Pick the tf.distribute strategy, the global batch and the precision for this machine.

One function decides, so the Trainer, the tests and the docs agree:
a TPU address (or `local` on a TPU VM) -> TPUStrategy; several GPUs ->
MirroredStrategy; one GPU or a CPU -> the default strategy.
"""
import dataclasses
from typing import Callable, Optional, Sequence

import tensorflow as tf

# TPU cores take batches in multiples of 8 per replica (XLA tiles of 8x128).
TPU_BATCH_MULTIPLE = 8
POLICIES = {"tpu": "mixed_bfloat16", "gpu": "mixed_float16", "cpu": "float32"}


@dataclasses.dataclass(frozen=True)
class Distribution:
    """What the Trainer runs under: a strategy, its kind, the batch and the precision."""

    strategy: tf.distribute.Strategy
    kind: str  # "tpu", "gpu" or "cpu": the hardware the replicas run on
    global_batch: int
    policy: str  # a Keras mixed-precision policy name

    @property
    def replicas(self) -> int:
        """Replicas in sync: the global batch is split across them."""
        return self.strategy.num_replicas_in_sync


def _tpu_strategy(address: str, resolver_factory: Callable) -> tf.distribute.Strategy:
    """Connects to the TPU cluster, initializes it, and returns a TPUStrategy."""
    # "local" means chips attached to this VM (a TPU VM, e.g. a GKE TPU node): the
    # resolver then skips the Cloud TPU API. An empty name would instead ask that
    # API (TPU_NAME, GCE metadata) and fails on GKE.
    resolver = resolver_factory(tpu=address)
    if address != "local":  # a TPU VM's own chips need no remote connection
        tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def select_strategy(tpu: Optional[str], per_replica_batch: int,
                    gpus: Optional[Sequence[str]] = None,
                    resolver_factory: Callable = None,
                    mixed_precision: bool = True) -> Distribution:
    """Chooses the strategy for `tpu` (an address, `local`, or None) and the visible GPUs.

    Args:
      tpu: TPU address (grpc://..., or a name the resolver knows), `local` on
        a TPU VM, or None for GPUs/CPU.
      per_replica_batch: examples per replica per step; on TPU, a multiple of 8.
      gpus: device names to mirror over; defaults to the visible GPUs. Tests
        pass logical CPU devices here to stand in for several GPUs.
      resolver_factory: builds the TPU cluster resolver (tests pass a fake).
      mixed_precision: bfloat16 on TPU and float16 on GPU when True.

    Raises:
      ValueError: a TPU batch that is not a multiple of 8.
    """
    tf.config.set_soft_device_placement(True)  # summaries fall back to the CPU
    if tpu:
        if per_replica_batch % TPU_BATCH_MULTIPLE:
            raise ValueError(f"--batch-size {per_replica_batch}: on TPU the batch per replica "
                             f"must be a multiple of {TPU_BATCH_MULTIPLE}")
        factory = resolver_factory or tf.distribute.cluster_resolver.TPUClusterResolver
        strategy, kind = _tpu_strategy(tpu, factory), "tpu"
    else:
        devices = list(gpus) if gpus is not None else [
            d.name for d in tf.config.list_logical_devices("GPU")]
        if len(devices) > 1:
            strategy = tf.distribute.MirroredStrategy(devices)
        else:
            strategy = tf.distribute.get_strategy()
        kind = "gpu" if any("GPU" in d.upper() for d in devices) else "cpu"
    policy = POLICIES[kind] if mixed_precision else "float32"
    return Distribution(strategy, kind, per_replica_batch * strategy.num_replicas_in_sync, policy)
