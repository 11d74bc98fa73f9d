"""Pick the tf.distribute strategy, the global batch and the precision for this machine.

One function decides, so the Trainer, the tests and the docs agree:
a TPU address (or `local` on a TPU VM) -> TPUStrategy; several GPUs ->
MirroredStrategy; one GPU or a CPU -> the default strategy; a TF_CONFIG
naming several workers -> MultiWorkerMirroredStrategy, and one with
parameter servers -> ParameterServerStrategy, coordinated by the chief.
"""
import dataclasses
import json
import os
import sys
import threading
from typing import Callable, Optional, Sequence

import tensorflow as tf

from modules.cluster.tf_config import (has_parameter_servers, is_chief, training_index,
                                       training_tasks)

# TPU cores take batches in multiples of 8 per replica (XLA tiles of 8x128).
TPU_BATCH_MULTIPLE = 8
# CPUs stay float32 even where they report AVX512_BF16: under mixed_bfloat16 the
# photo model trained slower there (docs/performance.md#cpu-training-levers).
POLICIES = {"tpu": "mixed_bfloat16", "gpu": "mixed_float16", "cpu": "float32"}


@dataclasses.dataclass(frozen=True)
class Distribution:
    """What the Trainer runs under: a strategy, its kind, the batch and the precision."""

    strategy: tf.distribute.Strategy
    kind: str  # "tpu", "gpu" or "cpu": the hardware the replicas run on
    global_batch: int
    policy: str  # a Keras mixed-precision policy name
    workers: int = 1  # machines (processes) training together
    is_chief: bool = True  # the one that writes the model, summaries and stats
    parameter_servers: int = 0  # ps tasks holding the variables (ParameterServerStrategy)
    task_index: int = 0  # this process's place among the `workers`, the chief first

    @property
    def replicas(self) -> int:
        """Replicas in sync: the global batch is split across them."""
        return self.strategy.num_replicas_in_sync

    @property
    def coordinated(self) -> bool:
        """ParameterServerStrategy: the chief schedules steps on workers, each its own input."""
        return isinstance(self.strategy, tf.distribute.ParameterServerStrategy)

    @property
    def name(self) -> str:
        """The strategy as the tf.distribute docs name it, for the plan and summary.json."""
        if self.coordinated:
            return "ParameterServerStrategy"
        if self.workers > 1:  # its class is CollectiveAllReduceStrategy
            return "MultiWorkerMirroredStrategy"
        kind = type(self.strategy).__name__
        return "TPUStrategy" if kind.startswith("TPUStrategy") else (
            kind if kind == "MirroredStrategy" else "default")


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
                    mixed_precision: bool = True, cluster: Optional[dict] = None,
                    rendezvous_s: float = 300.0) -> Distribution:
    """Chooses the strategy for `tpu` (an address, `local`, or None) and the visible GPUs.

    Args:
      tpu: TPU address (grpc://..., or a name the resolver knows), `local` on
        a TPU VM, or None for GPUs/CPU.
      per_replica_batch: examples per replica per step; on TPU, a multiple of 8.
      gpus: device names to mirror over; defaults to the visible GPUs. Tests
        pass logical CPU devices here to stand in for several GPUs.
      resolver_factory: builds the TPU cluster resolver (tests pass a fake).
      mixed_precision: bfloat16 on TPU and float16 on GPU when True.
      cluster: a checked TF_CONFIG naming several tasks
        (modules/cluster/tf_config.read_cluster): MultiWorkerMirroredStrategy,
        or ParameterServerStrategy when it has `ps` tasks (on the chief).
      rendezvous_s: how long the workers may take to find each other.

    Raises:
      ValueError: a TPU batch that is not a multiple of 8.
    """
    if cluster is not None:  # first: collectives must be set up before TF initializes
        build = _parameter_servers if has_parameter_servers(cluster) else _multi_worker
        return build(cluster, per_replica_batch, mixed_precision, rendezvous_s)
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


def _multi_worker(cluster: dict, per_replica_batch: int, mixed_precision: bool,
                  rendezvous_s: float) -> Distribution:
    """MultiWorkerMirroredStrategy for the TF_CONFIG cluster: RING on CPU, NCCL on GPU.

    CommunicationOptions' timeout bounds collective ops only: a worker whose
    peer never starts waits in the strategy's constructor for ever, ignoring
    SIGTERM (measured: docs/training.md). A watchdog ends it with a message.
    """
    gpus = tf.config.list_physical_devices("GPU")  # logical devices would initialize TF
    implementation = tf.distribute.experimental.CommunicationImplementation
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=implementation.NCCL if gpus else implementation.RING,
        timeout_seconds=rendezvous_s)
    strategy = _watched(cluster, rendezvous_s, lambda: tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=options))
    tf.config.set_soft_device_placement(True)
    kind = "gpu" if gpus else "cpu"
    policy = POLICIES[kind] if mixed_precision else "float32"
    return Distribution(strategy, kind, per_replica_batch * strategy.num_replicas_in_sync,
                        policy, workers=training_tasks(cluster), is_chief=is_chief(cluster),
                        task_index=training_index(cluster))


def _parameter_servers(cluster: dict, per_replica_batch: int, mixed_precision: bool,
                       rendezvous_s: float) -> Distribution:
    """ParameterServerStrategy, on the chief (the coordinator) of a cluster with ps tasks.

    Each step is one worker's batch, applied to the parameter servers'
    variables without waiting for the other workers: one replica in sync,
    so the global batch is the batch.
    """
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = _watched(cluster, rendezvous_s,
                        lambda: tf.distribute.ParameterServerStrategy(resolver))
    tf.config.set_soft_device_placement(True)
    kind = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    policy = POLICIES[kind] if mixed_precision else "float32"
    return Distribution(strategy, kind, per_replica_batch * strategy.num_replicas_in_sync,
                        policy, workers=training_tasks(cluster), is_chief=True,
                        parameter_servers=len(cluster["cluster"]["ps"]))


def _watched(cluster: dict, seconds: float, build: Callable) -> tf.distribute.Strategy:
    """build(), ended by _never_met if the cluster's tasks have not met within `seconds`."""
    watchdog = threading.Timer(seconds, _never_met, args=(cluster, seconds))
    watchdog.daemon = True
    watchdog.start()
    try:
        return build()
    finally:
        watchdog.cancel()


def _never_met(cluster: dict, seconds: float) -> None:
    """Ends a worker whose peers never connected, naming them (exit code 3)."""
    task = cluster["task"]
    print(f"imagepipe: error: {task['type']} {task.get('index', 0)} waited {seconds:.0f} s "
          f"for the other tasks of TF_CONFIG to connect: {json.dumps(cluster['cluster'])}",
          file=sys.stderr, flush=True)
    os._exit(3)  # noqa: SLF001  (TF's rendezvous holds the process; SIGTERM does not end it)
