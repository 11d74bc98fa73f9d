"""Name imagepipe's own setup.py as the Beam stages' dependency.

Without a dependency flag, every TFX Beam executor (StatisticsGen, Transform,
Evaluator and ours) calls tfx.utils.dependency_utils.make_beam_dependency_flags,
which copies the installed `tfx` package and runs `setup.py sdist` on it,
seconds per component of a default local run (measured: docs/performance.md),
for a package that only remote runners would read. It is also the wrong package for them: our DoFns
and module files import `components` and `modules`, which imagepipe's
setup.py ships and tfx's does not. So, unless a dependency flag is given
(TFX checks the same ones), `--setup_file` points at imagepipe's setup.py:
Beam's DirectRunner never stages it; Flink, Spark and Dataflow workers
install it. Dataflow runs from the pipeline image (`--sdk_container_image`,
see kfp_compiler.compiler.dataflow_args) and keep that instead.
"""
from typing import List, Sequence

from pathlib import Path

# tfx/utils/dependency_utils.py: any of these, set, stops TFX's packaging.
DEPENDENCY_FLAGS = ("extra_packages", "setup_file", "requirements_file",
                    "worker_harness_container_image", "sdk_container_image")


# imagepipe's setup.py in this checkout: the local runs' Beam dependency.
LOCAL_SETUP_FILE = str(Path(__file__).resolve().parent.parent / "setup.py")


def with_setup_file(beam_args: Sequence[str], setup_file: str) -> List[str]:
    """`beam_args`, plus --setup_file=`setup_file` unless a dependency flag is set."""
    from apache_beam.options.pipeline_options import PipelineOptions  # Beam: only when called
    options = PipelineOptions(list(beam_args)).get_all_options()
    if any(options.get(flag) for flag in DEPENDENCY_FLAGS):
        return list(beam_args)
    return [*beam_args, f"--setup_file={setup_file}"]
