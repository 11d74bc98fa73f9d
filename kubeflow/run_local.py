"""Run a compiled Kubeflow package on this machine, as the open-source KFP v2 backend would.

    .venv/bin/python kubeflow/run_local.py imagepipe-kubeflow.yaml --pipeline-root /tmp/kfp

Prints a line per task (start, done, seconds); a failed task stops the run
with exit code 1, naming the task and its log. Each step's container command
runs as a local process with this interpreter: the image is not pulled, and
there is no Kubernetes, Argo or object store. Upstream artifacts reach each
step with their type emptied, as the backend passes them; --keep-types passes
the declared types instead (as Vertex does), for comparison. A Trainer
compiled with --workers submits a TFJob; here its replicas run as local
processes with the TF_CONFIG the Training Operator would set. The logic is in
pipeline/kubeflow/emulator.py; this folder is not a Python package (see docs/kubeflow.md).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline.errors import UsageError  # noqa: E402  (after the path set-up)

EXIT_OK, EXIT_TASK_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="the .yaml `imagepipe compile --target kubeflow` wrote")
    parser.add_argument("--pipeline-root", default=None,
                        help="where artifacts go (default: the spec's defaultPipelineRoot)")
    parser.add_argument("--keep-types", action="store_true",
                        help="pass upstream artifacts with their declared types (friendlier "
                             "than the open-source backend, which empties them)")
    args = parser.parse_args(argv)
    from pipeline.kubeflow import emulator as kfp_local  # heavy (kfp); after --help
    try:
        spec = kfp_local.load_spec(args.package)
        root = args.pipeline_root or kfp_local.default_root(spec)
        if not root:
            raise UsageError(f"{args.package} has no defaultPipelineRoot: give --pipeline-root")
        run_root = kfp_local.run_pipeline(spec, root, keep_types=args.keep_types)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except kfp_local.TaskFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_TASK_FAILED
    print(f"succeeded: {run_root}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
