"""ParameterServerStrategy's other tasks, and the input it needs from the coordinator.

In a cluster with `ps` tasks the chief is the coordinator: it builds the
model, whose variables live on the parameter servers, and schedules
training steps on the workers. Workers and parameter servers run nothing
of their own: each starts a TensorFlow server and waits for the
coordinator until the cluster's job ends (Vertex AI and the Training
Operator end it when the chief exits; locally modules/cluster/launcher.py
stops them).

The coordinator sends every worker one traced dataset function, with the
same InputContext (input_pipeline_id 0, one pipeline): a fixed shuffle
seed would give every worker the same batches in the same order, and the
workers would repeat each other's steps. Shuffling is seeded at run time
on each worker instead (runtime_seed).
"""
import os
import sys

import tensorflow as tf
import tf_keras as keras

_GRAPH_SEED = 1  # any nonzero value: see per_worker


def prepare() -> None:
    """Before TensorFlow starts: a worker that is unreachable fails the step, not the job.

    TF's guide asks for GRPC_FAIL_FAST=use_caller on every task, so that
    the coordinator sees a lost worker at once and reschedules its steps.
    """
    os.environ.setdefault("GRPC_FAIL_FAST", "use_caller")


def serve(config: dict) -> None:
    """Starts this worker's or parameter server's TF server, and never returns."""
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol="grpc", start=True)
    print(f"imagepipe: {resolver.task_type} {resolver.task_id} serving the coordinator at "
          f"{server.target}", file=sys.stderr, flush=True)
    server.join()


def runtime_seed() -> tf.Tensor:
    """A seed drawn when a worker builds its dataset: its clock's nanoseconds.

    Every worker runs the same traced function; a tensor seed is evaluated
    on the worker, so two workers shuffle differently. Training under
    parameter servers is asynchronous, hence not reproducible anyway.
    """
    return tf.cast(tf.math.floormod(tf.timestamp() * 1e9, 2.0 ** 31), tf.int64)


def per_worker(build) -> keras.utils.experimental.DatasetCreator:
    """What Model.fit takes under ParameterServerStrategy: `build(seed)` on each worker."""

    def dataset_fn(context):
        # Traced in its own graph. With the global seed 0 (--seed 0),
        # random_seed.get_seed compares (0, seed tensor) with (0, 0), and a
        # symbolic tensor cannot be a Python bool; a nonzero graph seed
        # short-circuits that. The shuffle's own seed is still the worker's.
        tf.random.set_seed(_GRAPH_SEED)
        return build(runtime_seed())

    return keras.utils.experimental.DatasetCreator(dataset_fn)
