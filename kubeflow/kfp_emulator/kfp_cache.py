"""KFP's step cache, kept in files: the key, the fingerprint, the entries, the artifact ids.

As the KFP 2.4 backend does it:
- the key (cacheutils.GenerateCacheKey, the CacheKey proto): per input the
  names of its artifacts (their MLMD ids), the input parameter values, each
  output artifact as provisioned (type and declared metadata; no URI, and no
  name before MLMD records it), each output parameter's type, and the
  container's image and unresolved command + args;
- the fingerprint (GenerateFingerPrint): sha256 of the key's protojson,
  re-encoded by Go's encoding/json (sorted keys, no spaces, Go's numbers);
- the scope: entries are looked up by fingerprint, "pipeline/<pipeline name>"
  and namespace, newest first (GetExecutionCache); an entry is written only
  after the task succeeded (launcher_v2 Execute, CreateExecutionCache), and
  only where the task's cachingOptions.enableCache is set (driver
  getFingerPrintsAndID);
- on a hit the driver republishes the cached execution's output artifacts,
  the same MLMD artifacts (ids, URIs, metadata), and its output parameters
  (reuseCachedOutputs).
Here the files under `<pipeline root>/.kfp-local/` stand in for the API
server's task table and MLMD's id sequence: one machine is one namespace.
"""
import contextlib
import decimal
import fcntl
import hashlib
import json
import math
import os
import threading
import urllib.parse
from typing import Any, Dict, List, Optional

from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.storage import files

NAMESPACE = "local"  # the pod's namespace on a cluster (driver: config.InPodNamespace)
STATE_DIR = ".kfp-local"
REMOTE_BASE = "kfp-local"  # under the working directory, beside the logs of gs:// runs
# A run's tasks may end at once, each in a thread of its own: this lock orders
# them within the process; flock (below) orders the runs that share the directory.
_IDS_LOCK = threading.Lock()


def state_dir(pipeline_root: str) -> str:
    """Where the cache and the id sequence live: in a local root, else under ./kfp-local."""
    base = REMOTE_BASE if files.is_remote(pipeline_root) else pipeline_root
    return os.path.join(os.path.abspath(base), STATE_DIR)


def cache_key(executor_input: pb.ExecutorInput, component: pb.ComponentSpec,
              container: pb.PipelineDeploymentConfig.PipelineContainerSpec) -> Dict[str, Any]:
    """The CacheKey as protojson writes it (empty fields left out), from the driver's inputs."""
    inputs = executor_input.inputs
    outputs = component.output_definitions
    key = {
        "inputArtifactNames": {
            name: _omit_empty({"artifactNames": [a.name for a in listed.artifacts]})
            for name, listed in inputs.artifacts.items()},
        "inputParameterValues": {name: json_format.MessageToDict(value)
                                 for name, value in inputs.parameter_values.items()},
        "outputArtifactsSpec": {name: _provisioned(spec)
                                for name, spec in outputs.artifacts.items()},
        "outputParametersSpec": {
            name: pb.ParameterType.ParameterTypeEnum.Name(spec.parameter_type)
            for name, spec in outputs.parameters.items()},
        "containerSpec": _omit_empty({"image": container.image,
                                      "cmdArgs": [*container.command, *container.args]}),
    }
    return {name: value for name, value in key.items()
            if value or name == "containerSpec"}  # a set message stays, if empty


def _omit_empty(fields: Dict[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in fields.items() if value}


def _provisioned(spec: pb.ComponentOutputsSpec.ArtifactSpec) -> Dict[str, Any]:
    """An output artifact as the driver's provisionOutputs fills it, URI wiped."""
    artifact = pb.RuntimeArtifact()
    if spec.HasField("artifact_type"):
        artifact.type.CopyFrom(spec.artifact_type)
    if spec.HasField("metadata"):
        artifact.metadata.CopyFrom(spec.metadata)
    return json_format.MessageToDict(artifact)


def fingerprint(key: Dict[str, Any]) -> str:
    """sha256 hex of the key in Go encoding/json's canonical form."""
    return hashlib.sha256(_go_json(key).encode("utf-8")).hexdigest()


def _go_json(value) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_go_json(k)}:{_go_json(value[k])}"
                              for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(_go_json, value)) + "]"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        # Go escapes these for HTML and JavaScript safety; the hash must see the same bytes.
        for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                              ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
            text = text.replace(char, escaped)
        return text
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return _go_number(float(value))


def _go_number(number: float) -> str:
    """Go's float64 encoding: shortest digits, plain between 1e-6 and 1e21, else e-notation."""
    if not math.isfinite(number):
        raise ValueError(f"{number}: not representable in JSON")
    if number == 0 or 1e-6 <= abs(number) < 1e21:
        return format(decimal.Decimal(repr(number)).normalize(), "f")
    text = repr(number)  # Python's repr is the shortest round-trip form too
    mantissa, exponent = text.split("e")
    sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits.zfill(2) if sign == '+' else digits}"


class CacheStore:
    """The task table's cache rows: one file per (pipeline, namespace, fingerprint)."""

    def __init__(self, directory: str, pipeline_name: str, namespace: str = NAMESPACE):
        scope = urllib.parse.quote("pipeline/" + pipeline_name, safe="")
        self.directory = os.path.join(directory, "cache", scope, namespace)

    def _path(self, fingerprint_: str) -> str:
        return os.path.join(self.directory, fingerprint_ + ".json")

    def lookup(self, fingerprint_: str) -> Optional[Dict[str, Any]]:
        """The newest entry for this fingerprint, or None."""
        try:
            with open(self._path(fingerprint_)) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def record(self, fingerprint_: str, entry: Dict[str, Any]) -> None:
        """Writes the entry; a later one replaces it, as the newest row wins a lookup."""
        os.makedirs(self.directory, exist_ok=True)
        temporary = f"{self._path(fingerprint_)}.{os.getpid()}.tmp"
        with open(temporary, "w") as f:
            json.dump(entry, f, indent=1, sort_keys=True)
        os.replace(temporary, self._path(fingerprint_))


def next_artifact_ids(directory: str, count: int) -> List[int]:
    """`count` fresh MLMD-like artifact ids, unique across runs that share `directory`.

    A task's cache key holds its inputs' ids, so ids must never repeat: a
    second run's new artifact must not look like the first run's. Safe from
    any thread, and from other processes.
    """
    os.makedirs(directory, exist_ok=True)
    with _IDS_LOCK, open(os.path.join(directory, "artifact_ids"), "a+") as f:
        with _locked(f):
            f.seek(0)
            first = int(f.read().strip() or 1)
            f.seek(0)
            f.truncate()
            f.write(str(first + count))
    return list(range(first, first + count))


@contextlib.contextmanager
def _locked(f):
    # Two runs of one package may share the directory at once.
    fcntl.flock(f, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(f, fcntl.LOCK_UN)
