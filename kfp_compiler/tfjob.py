"""The Trainer as a Kubeflow TFJob: one pod per task, TF_CONFIG set by the Training Operator.

    imagepipe compile --target kubeflow --workers 4 [--ps 2] ...

KFP v2 runs one container per step, so a step cannot itself be several
machines. The Trainer step's executor therefore does what TFX's Vertex
Training extension does for Vertex: it submits a job whose every replica
runs TFX's `tfx.scripts.run_executor` on the step's own artifacts, waits
for it, and returns; the chief's run_fn writes the model into the step's
output. Here the job is a TFJob (kubeflow.org/v1, the Training Operator):
replicas Chief and Worker, plus PS with parameter servers. The operator
sets each pod's TF_CONFIG, which modules/distribution.py reads.

The step's service account must be allowed to create, get and delete
tfjobs in its namespace (kubeflow/manifests/tfjob-rbac.yaml).

`IMAGEPIPE_TFJOB_OPERATOR=local` (set by kubeflow/run_local.py) runs the
replicas as local processes instead, each with the TF_CONFIG the operator
would give it, on loopback ports: the same commands, no Kubernetes.
"""
import base64
import hashlib
import json
import os
import re
import signal
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from tfx.components.trainer import executor as trainer_executor
from tfx.utils import json_utils

from modules.cluster import launcher

TFJOB_KEY = "tfjob"  # custom_config key: the job's settings, written by the compiler
OPERATOR_ENV = "IMAGEPIPE_TFJOB_OPERATOR"
GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "tfjobs"
CONTAINER = "tensorflow"  # the container name the Training Operator configures
PORT = 2222  # the operator's default port (tfjob-port)
_POLL_S = 15.0
_POLL_ATTEMPTS = 4  # a status read may fail this many times in a row before the step does
_TTL_S = 86400  # a finished TFJob is removed after a day; a retry then creates it anew
_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# The Training Operator's replica types, in TF_CONFIG's job names.
_JOBS = {"Chief": "chief", "Worker": "worker", "PS": "ps"}


class Executor(trainer_executor.GenericExecutor):
    """Submits the Trainer as a TFJob; inside one of its pods (TF_CONFIG set), trains."""

    def Do(self, input_dict: Dict[str, List], output_dict: Dict[str, List],  # noqa: N802
           exec_properties: Dict[str, Any]) -> None:
        if os.environ.get("TF_CONFIG"):
            super().Do(input_dict, output_dict, exec_properties)
            return
        custom = json_utils.loads(exec_properties.get("custom_config") or "null") or {}
        job = custom[TFJOB_KEY]
        args = launcher.executor_args(f"{__name__}.Executor", input_dict, output_dict,
                                      exec_properties)
        name = job_name(job["pipeline"], json.dumps(args))
        manifest = tfjob_manifest(name, job, args, namespace=job.get("namespace"))
        if os.environ.get(OPERATOR_ENV) == "local":
            run_here(manifest)
        else:
            submit_and_wait(manifest)


def job_name(pipeline: str, key: str) -> str:
    """`<pipeline>-train-<hash>`, one per execution (its artifacts).

    The operator wants a DNS-1035 label (a letter first), and names each
    replica's Service `<job>-<type>-<index>`, itself at most 63 characters:
    the pipeline's part is kept to 30.
    """
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    prefix = re.sub(r"[^a-z0-9-]", "-", pipeline.lower())[:30].strip("-")
    if not prefix[:1].isalpha():
        prefix = "p-" + prefix
    return f"{prefix}-train-{digest}"


def job_settings(pipeline: str, image: str, workers: int, ps: int,
                 limits: Optional[Dict[str, str]] = None,
                 node_selector: Optional[Dict[str, str]] = None,
                 namespace: Optional[str] = None) -> dict:
    """What the compiler puts under custom_config[TFJOB_KEY]."""
    return {"pipeline": pipeline, "image": image, "workers": workers, "ps": ps,
            "limits": limits or {}, "node_selector": node_selector or {},
            "namespace": namespace}


def tfjob_manifest(name: str, job: dict, args: List[str],
                   namespace: Optional[str] = None) -> dict:
    """The TFJob: a Chief, the Workers (all of them with parameter servers), and PS.

    Without parameter servers the chief is one of the `workers` that train
    (MultiWorkerMirroredStrategy); with them it only coordinates. Parameter
    servers get the memory limit but no accelerator. Replicas restart on the
    exit codes the operator deems retryable (ExitCode): a preempted pod comes
    back and resumes from the BackupAndRestore state in the pipeline root.
    """
    limits = job["limits"]
    cpu_limits = {k: v for k, v in limits.items() if k in ("cpu", "memory")}
    workers, ps = job["workers"], job["ps"]
    # Parameter servers skip the accelerator's node selector too: GKE taints GPU
    # nodes, and only pods that request a GPU tolerate it.
    counts = {"Chief": (1, limits, True), "PS": (ps, cpu_limits, False),
              "Worker": (workers if ps else workers - 1, limits, True)}
    replicas = {kind: _replica(count, job, args, own_limits, select)
                for kind, (count, own_limits, select) in counts.items() if count > 0}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TFJob",
            "metadata": {"name": name, "namespace": namespace or _own_account()[0]},
            "spec": {"runPolicy": {"cleanPodPolicy": "All", "backoffLimit": 3,
                                   "ttlSecondsAfterFinished": _TTL_S},
                     "tfReplicaSpecs": replicas}}


def _replica(count: int, job: dict, args: List[str], limits: Dict[str, str],
             select_nodes: bool) -> dict:
    container = {"name": CONTAINER, "image": job["image"],
                 "command": ["python", *launcher.RUN_EXECUTOR], "args": args,
                 "ports": [{"name": "tfjob-port", "containerPort": PORT}]}
    if limits:
        container["resources"] = {"limits": dict(limits)}
    spec = {"containers": [container]}
    account = job.get("service_account") or _own_account()[1]
    if account:  # the step's own: the bucket lets it in (Workload Identity)
        spec["serviceAccountName"] = account
    if job["node_selector"] and select_nodes:
        spec["nodeSelector"] = dict(job["node_selector"])
    return {"replicas": count, "restartPolicy": "ExitCode", "template": {"spec": spec}}


def _own_account() -> Tuple[str, Optional[str]]:
    """(namespace, service account) of the pod this runs in, the step's; else ("default", None).

    The account's name is only in the mounted token's claims ("sub":
    system:serviceaccount:<namespace>:<name>).
    """
    try:
        with open(os.path.join(_ACCOUNT_DIR, "token")) as f:
            payload = f.read().strip().split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        _, _, namespace, account = claims["sub"].split(":")
        return namespace, account
    except (OSError, IndexError, KeyError, ValueError):
        return "default", None


def run_here(manifest: dict) -> None:
    """Runs every replica of `manifest` as a local process, as the operator would run pods.

    Each gets the TF_CONFIG the operator builds (job names chief, worker,
    ps; the chief first) with loopback ports for the pods' service names.
    """
    specs = {_JOBS[kind]: spec for kind, spec in manifest["spec"]["tfReplicaSpecs"].items()}
    cluster = launcher.loopback_cluster({job: spec["replicas"] for job, spec in specs.items()})
    tasks = []
    for name, config in launcher.task_configs(cluster, environment="cloud"):
        container = specs[name.split()[0]]["template"]["spec"]["containers"][0]
        argv = [sys.executable, *container["command"][1:], *container["args"]]
        tasks.append((name, config, argv))
    launcher.run_tasks(tasks, everyone="ps" not in specs)


def submit_and_wait(manifest: dict, poll_s: float = _POLL_S) -> None:
    """Creates the TFJob (or finds this execution's, on a retry) and waits for Succeeded.

    RuntimeError on Failed. Stopping the step (SIGTERM, as KFP does when a
    run is cancelled) deletes the job; a step killed outright cannot, and
    leaves it to finish (docs/kubeflow.md).
    """
    from kubernetes import client, config  # only in a cluster
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    api = client.CustomObjectsApi()
    meta = manifest["metadata"]
    where = (GROUP, VERSION, meta["namespace"], PLURAL)
    _create(api, client.ApiException, manifest, where)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # so that `finally` runs
    done = False
    try:
        while not done:
            time.sleep(poll_s)
            done = finished(_read(api, client.ApiException, where, meta["name"]))
    finally:
        if not done:  # failed, stopped, or unreadable: leave no job training on
            try:
                api.delete_namespaced_custom_object(*where, meta["name"])
            except client.ApiException as e:
                print(f"could not delete TFJob {meta['name']}: {e.reason}", file=sys.stderr)


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _create(api, api_error, manifest: dict, where: tuple) -> None:
    """Creates the job; a retried execution finds its own (409) and waits on it, unless failed."""
    name = manifest["metadata"]["name"]
    try:
        api.create_namespaced_custom_object(*where, manifest)
    except api_error as e:
        if e.status != 409:
            raise
        try:
            finished(api.get_namespaced_custom_object(*where, name))
        except RuntimeError:  # the earlier attempt failed: start again
            api.delete_namespaced_custom_object(*where, name)
            time.sleep(_POLL_S)
            api.create_namespaced_custom_object(*where, manifest)
    print(f"TFJob {where[2]}/{name}", flush=True)


def _read(api, api_error, where: tuple, name: str) -> dict:
    """The job's current state; a few transient API errors in a row are tolerated."""
    for _ in range(_POLL_ATTEMPTS - 1):
        try:
            return api.get_namespaced_custom_object(*where, name)
        except api_error:
            time.sleep(_POLL_S)
    return api.get_namespaced_custom_object(*where, name)  # the last error is the step's


def finished(job: dict) -> bool:
    """True once the TFJob succeeded; RuntimeError with the operator's message if it failed."""
    conditions = [c for c in job.get("status", {}).get("conditions", [])
                  if c.get("status") == "True"]
    kinds = {c["type"]: c for c in conditions}
    if "Failed" in kinds:
        name = job["metadata"]["name"]
        raise RuntimeError(f"TFJob {name} failed: {kinds['Failed'].get('message', '')}")
    return "Succeeded" in kinds
