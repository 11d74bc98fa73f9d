"""One TFX executor's own memory, re-run alone on a finished run's artifacts.

    python -m bench.pipeline_runs.executor_memory --output OUT --component Transform

Why: in `imagepipe run` the components share one process, and the heap an
earlier component grew is reused or kept unpredictably, so a component's rise
in the pipeline carries its predecessors' state. Here the executor runs in a
fresh process, with the inputs and execution properties the run recorded in
ML Metadata, under the same local Beam settings; RSS (with any child
processes) is sampled every 50 ms. Prints one JSON line: start_mb (after
imports), peak_mb, rise_mb, seconds. bench/pipeline_runs/scaling runs it for StatisticsGen
and Transform at each size.

What it showed for Transform: a rise that grows with the dataset and is
noisy from run to run, while memray's high-water mark puts the live heap
under TFX's Transform `Do` much lower, growing little, so most of the growth
is memory the allocator keeps after it is freed, not live data;
MALLOC_ARENA_MAX=2 did not change it (measured: docs/performance.md).
"""
import argparse
import json
import os
import tempfile
import threading
import time

from core import startup

startup.prepare()

from bench.common import rss_tree  # noqa: E402
from report import metadata  # noqa: E402
from settings.config import LOCAL_BEAM_ARGS, PipelineConfig  # noqa: E402
from core.beam_deps import LOCAL_SETUP_FILE  # noqa: E402

COMPONENTS = ("StatisticsGen", "Transform")


def _executor(component: str):
    if component == "StatisticsGen":
        from tfx.components.statistics_gen.executor import Executor
    else:
        from tfx.components.transform.executor import Executor
    return Executor


def _artifacts(store, nodes, work: str, component: str):
    """(inputs, outputs) as TFX artifacts: the run's recorded inputs, fresh outputs in `work`."""
    from tfx.types import artifact_utils, standard_artifacts
    recorded = {}
    for node in ("ImageExampleGen", "SchemaGen"):
        recorded.update(metadata.outputs(store, nodes[node]))
    examples, schema = (artifact_utils.deserialize_artifact(
        store.get_artifact_types_by_id([a.type_id])[0], a)
        for a in (recorded["Examples"], recorded["Schema"]))
    if component == "StatisticsGen":
        statistics = standard_artifacts.ExampleStatistics()
        statistics.uri = os.path.join(work, "statistics")
        return {"examples": [examples]}, {"statistics": [statistics]}
    graph = standard_artifacts.TransformGraph()
    graph.uri = os.path.join(work, "transform_graph")
    return {"examples": [examples], "schema": [schema]}, {"transform_graph": [graph]}


def _properties(execution) -> dict:
    return {k: v.string_value if v.HasField("string_value") else v.int_value
            for k, v in execution.custom_properties.items()
            if v.HasField("string_value") or v.HasField("int_value")}


def measure(output: str, component: str) -> dict:
    """Runs `component`'s executor once on `output`'s latest run; its memory and time."""
    from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
    config = PipelineConfig.from_values(output=output)
    store = metadata.open_store(config)
    nodes = metadata.latest_run(store, config.run.pipeline_name)
    executor_class = _executor(component)
    with tempfile.TemporaryDirectory(prefix="imagepipe-bench-executor-") as work:
        inputs, outputs = _artifacts(store, nodes, work, component)
        context = BaseBeamExecutor.Context(
            beam_pipeline_args=[*LOCAL_BEAM_ARGS.split(), f"--setup_file={LOCAL_SETUP_FILE}"],
            tmp_dir=os.path.join(work, "tmp"), unique_id="bench")
        start_rss, peak, stop = rss_tree(), [0], threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_tree())
                time.sleep(0.05)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        executor_class(context).Do(inputs, outputs, _properties(nodes[component]))
        seconds = time.perf_counter() - start
        stop.set()
        sampler.join()
    return {"component": component, "start_mb": round(start_rss / 1e6, 1),
            "peak_mb": round(peak[0] / 1e6, 1), "rise_mb": round((peak[0] - start_rss) / 1e6, 1),
            "seconds": round(seconds, 2)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", required=True, help="a finished `imagepipe run` output")
    parser.add_argument("--component", choices=COMPONENTS, required=True)
    args = parser.parse_args(argv)
    result = measure(args.output, args.component)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
