"""TF_CONFIG, read and checked before TensorFlow sees it: which cluster, which task, who is chief.

Light on purpose (no TensorFlow): the CLI checks a TF_CONFIG before
anything runs. TensorFlow's own errors for a bad one come late, read
unclearly, or never come: a worker-and-ps cluster without a chief made
MultiWorkerMirroredStrategy wait forever, ignoring SIGTERM (docs/training.md, "Training
on several workers").
"""
import json
import os
from typing import Dict, List, Mapping, Optional

JOBS = ("chief", "worker", "ps", "evaluator")


class ClusterConfigError(ValueError):
    """A TF_CONFIG that cannot describe a cluster; the message says why."""


def _addresses(cluster) -> bool:
    return isinstance(cluster, dict) and bool(cluster) and all(
        isinstance(tasks, list) and tasks and all(isinstance(a, str) and ":" in a for a in tasks)
        for tasks in cluster.values())


def _check_task(cluster: Dict[str, List[str]], task) -> None:
    if not isinstance(task, dict) or task.get("type") not in cluster:
        raise ClusterConfigError(f'TF_CONFIG: "task" must name a job of "cluster" '
                                 f"({', '.join(cluster)}), got {task!r}")
    index = task.get("index", 0)
    if not isinstance(index, int) or not 0 <= index < len(cluster[task["type"]]):
        raise ClusterConfigError(f'TF_CONFIG: task index {index!r} is not among the '
                                 f'{len(cluster[task["type"]])} {task["type"]} task(s)')


def _check_jobs(cluster: Dict[str, List[str]]) -> None:
    unknown = sorted(set(cluster) - set(JOBS))
    if unknown:
        raise ClusterConfigError(f"TF_CONFIG: unknown job(s) {unknown}; jobs are {JOBS}")
    if len(cluster.get("chief", [])) > 1:
        raise ClusterConfigError("TF_CONFIG: at most one chief")
    if "ps" in cluster and not ("chief" in cluster and "worker" in cluster):
        raise ClusterConfigError("TF_CONFIG: a cluster with parameter servers needs a chief "
                                 "(the coordinator) and at least one worker")
    if not ("worker" in cluster or "chief" in cluster):
        raise ClusterConfigError("TF_CONFIG: the cluster has no chief and no worker")


def read_cluster(env: Mapping[str, str] = os.environ) -> Optional[dict]:
    """The checked TF_CONFIG, or None when it is unset or names a single training task.

    Raises:
      ClusterConfigError: malformed JSON, no chief or worker, a task outside
        the cluster, parameter servers without a chief, ...
    """
    text = env.get("TF_CONFIG", "").strip()
    if not text:
        return None
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ClusterConfigError(f"TF_CONFIG is not JSON: {e}") from None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    if not _addresses(cluster):
        raise ClusterConfigError('TF_CONFIG: "cluster" must map job names to non-empty '
                                 'lists of "host:port" addresses')
    _check_jobs(cluster)
    _check_task(cluster, config.get("task"))
    training = sum(len(tasks) for job, tasks in cluster.items() if job != "evaluator")
    return config if training > 1 else None


def is_chief(config: dict) -> bool:
    """The chief task, or worker 0 when the cluster has no chief (TensorFlow's rule)."""
    task = config["task"]
    if "chief" in config["cluster"]:
        return task["type"] == "chief"
    return task["type"] == "worker" and task.get("index", 0) == 0


def training_tasks(config: dict) -> int:
    """Tasks that train: the chief and the workers; with parameter servers, the workers."""
    jobs = ("worker",) if has_parameter_servers(config) else ("chief", "worker")
    return sum(len(config["cluster"].get(job, [])) for job in jobs)


def training_index(config: dict) -> int:
    """This task's place among the tasks that train: the chief first, then the workers."""
    task = config["task"]
    if task["type"] == "chief":
        return 0
    chiefs = 0 if has_parameter_servers(config) else len(config["cluster"].get("chief", []))
    return chiefs + task.get("index", 0)


def has_parameter_servers(config: dict) -> bool:
    """A ParameterServerStrategy cluster: the chief coordinates, workers and ps serve."""
    return "ps" in config["cluster"]


def serves(config: dict) -> bool:
    """This task only serves the coordinator (a worker or ps of a parameter-server cluster)."""
    return has_parameter_servers(config) and config["task"]["type"] in ("worker", "ps")
