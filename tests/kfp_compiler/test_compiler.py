"""`imagepipe compile`: both targets compile, parse strictly, and hold what a cluster needs.

Golden files:
    IMAGEPIPE_UPDATE_GOLDEN=1 bash scripts/test.sh tests/kfp_compiler/test_compiler.py
rewrites tests/kfp_compiler/golden/; review the diff before committing it.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml
from google.cloud.aiplatform_v1.types import PipelineJob
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from kfp_compiler.accelerators import parse_accelerator
from settings.config import PipelineConfig
from kfp_compiler.compiler import KUBEFLOW_ENTRYPOINT, TFX_ENTRYPOINT, compile_pipeline
from tests.support.paths import EXAMPLE_MODULE, GOLDEN, SUBMIT

IMAGE = "us-docker.pkg.dev/proj/imagepipe/pipeline:1.0"
# Fixed cloud paths: compiling must not touch them, and goldens stay stable.
CONFIG = PipelineConfig.from_values(data="gs://bucket/flowers", output="gs://bucket/imagepipe",
                                    image_size=64, channels=3)
VARIANTS = {
    "kubeflow": ("kubeflow", None),
    "kubeflow_tpu": ("kubeflow", "tpu:tpu-v5-lite-podslice:2x4"),
    "kubeflow_gpu": ("kubeflow", "gpu:nvidia-tesla-t4:2"),
    "vertex": ("vertex", None),
    "vertex_gpu": ("vertex", "gpu:nvidia-tesla-t4:1"),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """{variant: (pipeline spec dict, platform spec dict or None, raw text)}."""
    out, result = tmp_path_factory.mktemp("compiled"), {}
    for name, (target, accelerator) in VARIANTS.items():
        path = out / (name + (".yaml" if target == "kubeflow" else ".json"))
        compile_pipeline(CONFIG, target, IMAGE, str(path), parse_accelerator(accelerator))
        text = path.read_text()
        if target == "kubeflow":
            docs = list(yaml.safe_load_all(text))
            result[name] = (docs[0], docs[1] if len(docs) > 1 else None, text)
            result[name + "_path"] = path
        else:
            result[name] = (json.loads(text)["pipelineSpec"], None, text)
    return result


@pytest.mark.parametrize("name", VARIANTS)
def test_specs_parse_strictly(compiled, name):
    spec, platform, text = compiled[name]
    json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())  # unknown fields raise
    if platform:
        json_format.ParseDict(platform, pipeline_spec_pb2.PlatformSpec())
    if VARIANTS[name][0] == "vertex":
        job = PipelineJob.from_json(text, ignore_unknown_fields=False)
        assert job.runtime_config.gcs_output_directory == CONFIG.pipeline_root


@pytest.mark.parametrize("name", VARIANTS)
def test_every_task_runs_a_container_of_the_image(compiled, name):
    spec, _, _ = compiled[name]
    assert spec["schemaVersion"] == "2.1.0"
    assert re.match(r"^[a-z0-9][a-z0-9-]{0,127}$", spec["pipelineInfo"]["name"])
    executors = spec["deploymentSpec"]["executors"]
    for task in spec["root"]["dag"]["tasks"].values():
        component = spec["components"][task["componentRef"]["name"]]
        executor = executors[component["executorLabel"]]
        if "resolver" in executor:
            continue
        container = executor["container"]
        assert container["image"] == IMAGE
        # Open-source KFP empties input types; our entrypoint restores them for TFX's.
        assert container["command"] == (KUBEFLOW_ENTRYPOINT if VARIANTS[name][0] == "kubeflow"
                                        else TFX_ENTRYPOINT)
        assert "--executor_class_path" in container["args"] and "{{$}}" in container["args"]


def test_kubeflow_has_no_resolver_and_takes_the_baseline_from_the_push_destination(compiled):
    for name in ("kubeflow", "kubeflow_tpu", "kubeflow_gpu"):
        spec = compiled[name][0]
        assert not [k for k, e in spec["deploymentSpec"]["executors"].items() if "resolver" in e]
        tasks = spec["root"]["dag"]["tasks"]
        assert "pushed_baseline" in tasks and "latest_blessed_model_resolver" not in tasks
        evaluator = tasks["Evaluator"]["inputs"]["artifacts"]["baseline_model"]
        assert evaluator["taskOutputArtifact"]["producerTask"] == "pushed_baseline"
        serving_dir = tasks["pushed_baseline"]["inputs"]["parameters"]["serving_dir"]
        assert serving_dir["runtimeValue"]["constant"] == "gs://bucket/imagepipe/serving/imagepipe"


def test_kubeflow_names_its_pipeline_root(compiled):
    """TFX writes the root only into Vertex's PipelineJob; a KFP run needs it in the spec."""
    assert compiled["kubeflow"][0]["defaultPipelineRoot"] == CONFIG.pipeline_root


@pytest.mark.parametrize("target", ["kubeflow", "vertex"])
def test_compiled_targets_read_baseline_and_warm_start_from_the_push_destination(
        compiled, target):
    """No resolver on either: a rollback's pin (served.json) must hold on Vertex too."""
    spec = compiled[target][0]
    assert not [e for e in spec["deploymentSpec"]["executors"].values() if "resolver" in e]
    tasks = spec["root"]["dag"]["tasks"]
    assert {"pushed_baseline", "pushed_warm_start"} <= set(tasks)
    assert tasks["pushed_warm_start"]["cachingOptions"]["enableCache"] is False


@pytest.mark.parametrize("target", ["kubeflow", "vertex"])
def test_every_step_after_ingestion_runs_only_on_new_inputs(compiled, target):
    tasks = compiled[target][0]["root"]["dag"]["tasks"]
    assert tasks["ImageExampleGen"]["cachingOptions"]["enableCache"] is False
    for name, task in tasks.items():
        if name == "ImageExampleGen":
            continue
        condition = task["triggerPolicy"]["condition"]
        key = condition.split("inputs.artifacts['")[1].split("'")[0]
        assert "metadata['new_data'] == 1.0" in condition, name
        assert key in task["inputs"]["artifacts"], (name, key)


def _digest(path) -> str:
    spec = next(yaml.safe_load_all(path.read_text()))
    return spec["root"]["dag"]["tasks"]["ImageExampleGen"]["inputs"]["parameters"][
        "pipeline_digest"]["runtimeValue"]["constant"]


def test_the_same_flags_give_the_same_digest_and_a_changed_flag_another(compiled, tmp_path):
    """A weekly run of one package is not new; a recompile with any change is."""
    again, changed = tmp_path / "again.yaml", tmp_path / "changed.yaml"
    compile_pipeline(CONFIG, "kubeflow", IMAGE, str(again))
    compile_pipeline(CONFIG.replace(epochs=7), "kubeflow", IMAGE, str(changed))
    assert _digest(again) == _digest(compiled["kubeflow_path"])
    assert _digest(changed) != _digest(again)


def test_the_package_carries_its_own_digest(compiled):
    """ImageExampleGen's pipeline_digest is the package's, taken with it empty."""
    from kfp_compiler.compiler import with_pipeline_digest
    text = compiled["kubeflow"][2]
    assert with_pipeline_digest(text, "kubeflow") == text
    parameters = compiled["kubeflow"][0]["root"]["dag"]["tasks"]["ImageExampleGen"]["inputs"][
        "parameters"]
    assert len(parameters["pipeline_digest"]["runtimeValue"]["constant"]) == 64


def _trainer(spec):
    label = spec["components"][spec["root"]["dag"]["tasks"]["Trainer"]["componentRef"]["name"]][
        "executorLabel"]
    return label, spec["deploymentSpec"]["executors"][label]["container"]


def _custom_config(spec) -> dict:
    value = spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]["custom_config"]
    return json.loads(value["runtimeValue"]["constant"])["trainer_params"]


@pytest.mark.parametrize("name, resource, count, selector", [
    ("kubeflow_tpu", "google.com/tpu", "8",
     {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
      "cloud.google.com/gke-tpu-topology": "2x4"}),
    ("kubeflow_gpu", "nvidia.com/gpu", "2",
     {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}),
    ("vertex_gpu", "NVIDIA_TESLA_T4", "1", None),
])
def test_accelerators_request_resources_and_nodes(compiled, name, resource, count, selector):
    spec, platform, _ = compiled[name]
    label, container = _trainer(spec)
    assert container["resources"]["accelerator"] == {"type": resource, "count": count}
    assert container["resources"]["memoryLimit"] == 8.59  # 8 GiB, in KFP's GB
    other = [e["container"].get("resources") for k, e in spec["deploymentSpec"]["executors"].items()
             if k != label and "container" in e]
    assert other == [None] * len(other)  # only the Trainer gets the accelerator
    if selector:
        executors = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
        assert executors == {label: {"nodeSelector": {"labels": selector}}}
    assert _custom_config(spec).get("tpu") == ("local" if "tpu" in name else None)


@pytest.mark.parametrize("name", ["kubeflow", "vertex"])
def test_no_accelerator_means_a_memory_limit_only_and_no_platform_spec(compiled, name):
    spec, platform, _ = compiled[name]
    assert platform is None and _trainer(spec)[1]["resources"] == {"memoryLimit": 8.59}


def test_user_code_is_referenced_by_dotted_path_not_uploaded(compiled):
    text = compiled["kubeflow"][2]
    assert "modules.trainer.run_fn" in text and "modules.preprocessing.preprocessing_fn" in text
    # No TFX module_file parameter (packaged into a wheel under the root); a
    # --module-file's text rides in the Trainer's custom_config instead.
    assert "_wheels" not in text and not re.search(r"^\s+module_file:", text, re.M)


def _normalized(name, compiled) -> str:
    """The spec without sdkVersion (it names the TFX release). The PipelineJob's version
    labels live outside pipelineSpec, so they never reach the comparison."""
    spec, platform, text = compiled[name]
    spec = {k: v for k, v in spec.items() if k != "sdkVersion"}
    return json.dumps({"spec": spec, "platform": platform}, indent=1, sort_keys=True) + "\n"


@pytest.mark.parametrize("name", ["kubeflow_tpu", "vertex_gpu"])
def test_matches_the_golden_file(compiled, name):
    golden = GOLDEN / f"{name}.json"
    got = _normalized(name, compiled)
    if os.environ.get("IMAGEPIPE_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text(), f"{golden} differs; see the module docstring"


def test_kfps_client_sends_the_node_selectors(compiled):
    """kubeflow/submit.py --dry-run reads the package with kfp's public loader."""
    result = subprocess.run([sys.executable, str(SUBMIT), "--dry-run",
                             str(compiled["kubeflow_tpu_path"])],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    sent = json.loads(result.stdout)
    assert sent["schema"] == "2.1.0" and "Trainer" in sent["tasks"]
    assert sent["platform_spec"] == compiled["kubeflow_tpu"][1]


def test_the_submit_script_uses_only_kfps_public_api():
    import ast
    tree = ast.parse(SUBMIT.read_text(encoding="utf-8"))
    private = [node.attr for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr.startswith("_")
               and not node.attr.startswith("__")]
    assert not private, private


def test_a_tpu_on_vertex_is_refused(tmp_path):
    from core.errors import UsageError
    with pytest.raises(UsageError, match="for --target kubeflow"):
        compile_pipeline(CONFIG, "vertex", IMAGE, str(tmp_path / "v.json"),
                         parse_accelerator("tpu:tpu-v5-lite-podslice:2x4"))


def test_compiling_writes_nothing_under_the_pipeline_root(tmp_path):
    config = CONFIG.replace(output=str(tmp_path / "root"))
    compile_pipeline(config, "kubeflow", IMAGE, str(tmp_path / "spec.yaml"))
    assert not (tmp_path / "root").exists()


def test_a_module_files_text_travels_in_the_compiled_spec(tmp_path):
    from modules.params import CUSTOM_CONFIG_KEY
    module = EXAMPLE_MODULE
    path = tmp_path / "spec.yaml"
    compile_pipeline(CONFIG.replace(module_file=str(module)), "kubeflow", IMAGE, str(path), None)
    spec = next(yaml.safe_load_all(path.read_text()))
    trainer = spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]
    custom = json.loads(trainer["custom_config"]["runtimeValue"]["constant"])
    params = custom[CUSTOM_CONFIG_KEY]
    assert params["model"] == "module" and params["module_source"] == module.read_text()
    assert params["module_file"] == str(module)


def _trainer_executor(spec: dict) -> dict:
    label = spec["components"][spec["root"]["dag"]["tasks"]["Trainer"]["componentRef"]["name"]]
    return spec["deploymentSpec"]["executors"][label["executorLabel"]]["container"]


def test_vertex_runs_a_multi_worker_trainer_as_a_custom_job_with_worker_pools(tmp_path):
    from kfp_compiler.compiler import vertex_training_args
    job = vertex_training_args("proj", "us-central1", IMAGE, 3, "n1-standard-8", None)
    path = compile_pipeline(CONFIG.replace(workers=3), "vertex", IMAGE, str(tmp_path / "v.json"),
                            None, job)
    spec = json.loads(pathlib.Path(path).read_text())["pipelineSpec"]
    args = _trainer_executor(spec)["args"]
    assert ("tfx.extensions.google_cloud_ai_platform.trainer.executor.GenericExecutor"
            in args)
    custom = json.loads(spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]
                        ["custom_config"]["runtimeValue"]["constant"])
    pools = custom["ai_platform_training_args"]["job_spec"]["worker_pool_specs"]
    assert [p["replica_count"] for p in pools] == [1, 2]  # the chief, then the workers
    assert all(p["container_spec"]["image_uri"] == IMAGE for p in pools)
    assert custom["ai_platform_enable_vertex"] and custom["ai_platform_vertex_region"] == \
        "us-central1"
    assert custom["trainer_params"]["workers"] == 3  # run_fn reads TF_CONFIG on each replica
    assert "resources" not in _trainer_executor(spec)  # the step only submits the job


def test_the_plan_sizes_the_decode_cache_from_the_trainers_memory_not_this_machines(tmp_path):
    path = compile_pipeline(CONFIG, "kubeflow", IMAGE, str(tmp_path / "k.yaml"),
                            trainer_memory=2 << 30)
    spec = next(yaml.safe_load_all(pathlib.Path(path).read_text()))
    assert _custom_config(spec)["cache_bytes"] == (2 << 30) // 8  # rules.DECODE_CACHE_SHARE
    assert _trainer(spec)[1]["resources"] == {"memoryLimit": 2.15}


def test_vertex_parameter_servers_get_a_third_pool_without_accelerators():
    from kfp_compiler.compiler import vertex_training_args
    job = vertex_training_args("proj", "us-central1", IMAGE, 2, "n1-standard-8",
                               parse_accelerator("gpu:nvidia-tesla-t4:1"), ps=1)
    pools = job["job_spec"]["worker_pool_specs"]
    assert [p["replica_count"] for p in pools] == [1, 2, 1]  # coordinator, workers, ps
    assert [p["machine_spec"].get("accelerator_type") for p in pools] == [
        "NVIDIA_TESLA_T4", "NVIDIA_TESLA_T4", None]


def _tfjob_settings(spec) -> dict:
    value = spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]["custom_config"]
    return json.loads(value["runtimeValue"]["constant"])["tfjob"]


def test_kubeflow_workers_make_the_trainer_step_submit_a_tfjob(tmp_path):
    from kfp_compiler.tfjob import tfjob_manifest
    path = compile_pipeline(CONFIG.replace(workers=3), "kubeflow", IMAGE,
                            str(tmp_path / "k.yaml"), parse_accelerator("gpu:nvidia-l4:1"),
                            trainer_memory=32 << 30)
    docs = list(yaml.safe_load_all(pathlib.Path(path).read_text()))
    spec = docs[0]
    assert len(docs) == 1  # the step lands on any node: its replicas take the GPUs
    label, container = _trainer(spec)
    assert "kfp_compiler.tfjob.Executor" in container["args"]
    assert "resources" not in container  # it only submits and waits
    assert _custom_config(spec)["cache_bytes"] == 1 << 30  # 32 GiB: the cap, not 8 GiB / 8
    settings = _tfjob_settings(spec)
    assert settings == {"pipeline": CONFIG.run.pipeline_name, "image": IMAGE, "workers": 3,
                        "ps": 0, "limits": {"memory": "32Gi", "nvidia.com/gpu": "1"},
                        "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                        "namespace": None}
    manifest = tfjob_manifest("p-train-1", settings, ["--x"], namespace="ns")
    replicas = manifest["spec"]["tfReplicaSpecs"]
    assert {kind: r["replicas"] for kind, r in replicas.items()} == {"Chief": 1, "Worker": 2}
    pod = replicas["Worker"]["template"]["spec"]
    assert pod["containers"][0]["name"] == "tensorflow"  # the operator's container
    assert pod["containers"][0]["command"] == ["python", "-m", "tfx.scripts.run_executor"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def test_tfjob_parameter_servers_get_memory_but_no_gpu_and_no_gpu_nodes():
    from kfp_compiler.tfjob import job_settings, tfjob_manifest
    settings = job_settings("p", IMAGE, 2, 1, {"memory": "16Gi", "nvidia.com/gpu": "1"},
                            {"cloud.google.com/gke-accelerator": "nvidia-l4"})
    replicas = tfjob_manifest("p-train-1", settings, [], namespace="ns")["spec"][
        "tfReplicaSpecs"]
    assert {kind: r["replicas"] for kind, r in replicas.items()} == {
        "Chief": 1, "Worker": 2, "PS": 1}
    limits = replicas["PS"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"memory": "16Gi"}
    assert "nodeSelector" not in replicas["PS"]["template"]["spec"]  # GPU nodes are tainted
    assert "nodeSelector" in replicas["Worker"]["template"]["spec"]


def test_tpu_with_workers_is_refused():
    from core.errors import UsageError
    with pytest.raises(UsageError, match="one TPU slice"):
        compile_pipeline(CONFIG.replace(workers=2), "kubeflow", IMAGE, "/nonexistent/k.yaml",
                         parse_accelerator("tpu:tpu-v5-lite-podslice:2x4"))


@pytest.mark.parametrize("target", ["kubeflow", "vertex"])
def test_a_span_pattern_is_ingested_on_every_run_and_the_rest_stays_cached(tmp_path, target):
    path = tmp_path / ("spec.yaml" if target == "kubeflow" else "spec.json")
    compile_pipeline(CONFIG.replace(data="gs://bucket/photos/span-{SPAN}"), target, IMAGE,
                     str(path), None)
    text = path.read_text()
    spec = next(yaml.safe_load_all(text)) if target == "kubeflow" else \
        json.loads(text)["pipelineSpec"]
    tasks = spec["root"]["dag"]["tasks"]
    assert tasks["ImageExampleGen"]["cachingOptions"] == {"enableCache": False}
    assert tasks["Trainer"]["cachingOptions"] == {"enableCache": True}
    parameters = tasks["ImageExampleGen"]["inputs"]["parameters"]
    assert parameters["input_base"]["runtimeValue"]["constant"] == "gs://bucket/photos/span-{SPAN}"


@pytest.mark.parametrize("target, accelerator", [("kubeflow", "gpu:nvidia-tesla-t4:1"),
                                                 ("vertex", "gpu:nvidia-tesla-t4:1")])
def test_a_tuned_pipeline_searches_on_the_trainers_machine_and_hands_it_the_best(
        tmp_path, target, accelerator):
    path = tmp_path / ("p.yaml" if target == "kubeflow" else "p.json")
    compile_pipeline(CONFIG.replace(tune=True, tune_trials=6), target, IMAGE, str(path),
                     parse_accelerator(accelerator))
    text = path.read_text()
    docs = list(yaml.safe_load_all(text)) if target == "kubeflow" else [
        json.loads(text)["pipelineSpec"]]
    spec, tasks = docs[0], docs[0]["root"]["dag"]["tasks"]
    hyper = tasks["Trainer"]["inputs"]["artifacts"]["hyperparameters"]["taskOutputArtifact"]
    assert hyper == {"producerTask": "Tuner", "outputArtifactKey": "best_hyperparameters"}
    tuner_config = json.loads(
        tasks["Tuner"]["inputs"]["parameters"]["custom_config"]["runtimeValue"]["constant"])
    assert tuner_config["tuning_params"]["trials"] == 6
    assert tuner_config["trainer_params"] == _custom_config(spec)
    label = spec["components"][tasks["Tuner"]["componentRef"]["name"]]["executorLabel"]
    container = spec["deploymentSpec"]["executors"][label]["container"]
    assert container["resources"] == _trainer(spec)[1]["resources"]
    assert "modules.tuning.search.tuner_fn" in text
    if target == "kubeflow":
        selectors = docs[1]["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
        assert set(selectors) == {label, _trainer(spec)[0]}


def test_a_tuner_beside_a_tfjob_trainer_still_lands_on_the_accelerator_nodes(tmp_path):
    path = tmp_path / "p.yaml"
    compile_pipeline(CONFIG.replace(tune=True, workers=2), "kubeflow", IMAGE, str(path),
                     parse_accelerator("gpu:nvidia-tesla-t4:1"))
    spec, platform = list(yaml.safe_load_all(path.read_text()))
    tasks = spec["root"]["dag"]["tasks"]
    label = spec["components"][tasks["Tuner"]["componentRef"]["name"]]["executorLabel"]
    selectors = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    assert list(selectors) == [label]  # the Trainer step only submits the TFJob
