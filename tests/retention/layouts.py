"""A compiled pipeline's output laid out as its steps write it, local or in a bucket.

Shared by test_compiled_root.py and bucket_gc_steps.py, which runs outside pytest (under
scripts/with_gcs.sh), hence a module and not a fixture. Every write goes through
core/storage/files.py, so the same layout lands in a folder or in gs://.

    root/tfx/imagepipe/run-a/Trainer/model/...   version 100 was pushed from it
    root/tfx/imagepipe/run-b/...                 version 200
    root/tfx/imagepipe/run-c/...                 version 300 (served, TFLite CURRENT)
    root/tfx/imagepipe/run-d/...                 the newest run: a week without new data
    root/serving/imagepipe/{100,200,300}/        and 350 (no saved_model.pb: a killed push)
    root/serving/imagepipe/.400.partial-1234abcd/
    root/tflite/imagepipe/{100,300}/, CURRENT -> 300
    root/tfx/ImageExampleGen/spans/              span 1 (published, one abandoned attempt),
                                                 span 2 (published), span 3 (no _COMPLETE)
"""
import json
import os

from components.image_pusher.versions import point_tflite, publish
from core.storage import files
from settings.config import PipelineConfig

RUNS = ("run-a", "run-b", "run-c", "run-d")
PUSHED = {100: "run-a", 200: "run-b", 300: "run-c"}  # version -> the run it was pushed from
TFLITE = (100, 300)  # 200's TFLite failed the parity gate
# Task folders of a run that trained, and of one that found no new data.
TRAINED_TASKS = ("ImageExampleGen/examples", "StatisticsGen/statistics",
                 "Transform/transform_graph", "Trainer/model", "Evaluator/blessing")
IDLE_TASKS = ("ImageExampleGen/examples",)


def _file(path: str, size: int = 100) -> None:
    files.write_bytes(path, b"x" * size)


def lay_out_runs(config: PipelineConfig) -> dict:
    """The run folders; returns {run: its folder}."""
    group = os.path.join(config.pipeline_root, config.run.pipeline_name)
    folders = {}
    for run in RUNS:
        folders[run] = os.path.join(group, run)
        for task in (IDLE_TASKS if run == "run-d" else TRAINED_TASKS):
            _file(os.path.join(folders[run], task, "data.bin"), 1000)
    return folders


def lay_out_versions(config: PipelineConfig, runs: dict, scratch: str) -> dict:
    """Versions pushed from the runs' models, as the Pusher publishes them, a killed push's
    leftovers, TFLite versions and the pointer. Returns {version: source URI}."""
    model = os.path.join(scratch, "trained")
    _file(os.path.join(model, "saved_model.pb"), 2000)
    _file(os.path.join(model, "variables", "variables.index"), 500)
    sources = {}
    for number, run in PUSHED.items():
        sources[number] = os.path.join(runs[run], "Trainer", "model")
        publish(model, config.serving_dir, number, source_uri=sources[number],
                record={"spans": [1]})
        if number in TFLITE:
            _file(os.path.join(config.tflite_dir, str(number), "model.tflite"), 300)
    _file(os.path.join(config.serving_dir, "350", "variables", "variables.index"), 500)
    _file(os.path.join(config.serving_dir, ".400.partial-1234abcd", "saved_model.pb"), 2000)
    point_tflite(config.tflite_dir, config.serving_dir)
    return sources


def lay_out_spans(config: PipelineConfig) -> dict:
    """The span store: {name: path} of its entries and attempts."""
    store = config.ingest_options().span_store
    paths = {f"span-{n}": os.path.join(store, f"span-{n}-{key}")
             for n, key in ((1, "aaaa"), (2, "bbbb"), (3, "cccc"))}
    for name, attempt in (("span-1", "attempt-won"), ("span-2", "attempt-only")):
        _file(os.path.join(paths[name], attempt, "Split-train", "data.gz"), 700)
        files.write_text(os.path.join(paths[name], "_COMPLETE"),
                         json.dumps({"attempt": attempt}))
    paths["abandoned"] = os.path.join(paths["span-1"], "attempt-killed")
    _file(os.path.join(paths["abandoned"], "Split-train", "data.gz"), 600)
    _file(os.path.join(paths["span-3"], "attempt-half", "Split-train", "data.gz"), 400)
    files.write_text(os.path.join(store, "classes.json"), json.dumps(["0", "1"]))
    return paths


def lay_out(config: PipelineConfig, scratch: str) -> dict:
    """The whole output: {"runs": ..., "sources": ..., "spans": ...}."""
    from components.image_pusher.serving_config import write_serving_configs
    runs = lay_out_runs(config)
    sources = lay_out_versions(config, runs, scratch)
    write_serving_configs(os.path.dirname(config.serving_dir))
    return {"runs": runs, "sources": sources, "spans": lay_out_spans(config)}
