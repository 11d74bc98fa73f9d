"""Run a compiled Kubeflow package on this machine, as the open-source KFP v2 backend would.

    .venv/bin/python kubeflow/run_local.py imagepipe-kubeflow.yaml --pipeline-root /tmp/kfp

Every task starts once its upstream tasks are done, as Argo starts them; at
most --parallelism task processes run at once (default: one per CPU; 1 runs
them one after another). Prints a line per event, as it happens: `start
<task>`, then `done  <task> 12.3 s`; or `cached <task>` (a cache hit: the
earlier execution's outputs reused, no process) or `skipped <task> (why)`
(its trigger condition is false, or an upstream task was skipped). When the
Trainer was skipped or cached, a `nothing new: <reason>` line says why; the
run still exits 0. A run that tries again inputs whose last try failed says so
in a `retried: <reason>` line. When the Pusher ran, a `verdict: <kind>: <reason>` line says
what it decided (pushed, or refused for the model or the data). A failed task
stops the run with exit code 1, naming the task and its log, and a `failed:
<task>: <error>` line quotes the log's error: no task starts after it, and the
running ones finish first. Caching follows each task's `cachingOptions.enableCache`;
--disable-cache turns it off for the run, as KFP's `enable_caching=False`
does; entries persist under the pipeline root's .kfp-local/ (./kfp-local/ for
a gs:// root). Each step's container command runs as a local process with
this interpreter: the image is not pulled, and there is no Kubernetes, Argo
or object store. Upstream artifacts reach each
step with their type emptied, as the backend passes them; --keep-types passes
the declared types instead (as Vertex does), for comparison. A Trainer
compiled with --workers submits a TFJob; here its replicas run as local
processes with the TF_CONFIG the Training Operator would set. The logic is in
kubeflow/kfp_emulator/emulator.py; this folder is not a Python package (see docs/kubeflow.md).
"""
import argparse
import os
import sys

# The repo's packages, and kfp_emulator beside this file (a development tool, not installed).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]

from core.errors import UsageError  # noqa: E402  (after the path set-up)

EXIT_OK, EXIT_TASK_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="the .yaml `imagepipe compile --target kubeflow` wrote")
    parser.add_argument("--pipeline-root", default=None,
                        help="where artifacts go (default: the spec's defaultPipelineRoot)")
    parser.add_argument("--disable-cache", action="store_true",
                        help="run every task, reading and writing no cache entry (KFP's "
                             "run-level enable_caching=False)")
    parser.add_argument("--keep-types", action="store_true",
                        help="pass upstream artifacts with their declared types (friendlier "
                             "than the open-source backend, which empties them)")
    parser.add_argument("--parallelism", type=_positive, default=os.cpu_count() or 1,
                        metavar="N", help="run at most N tasks at once, as KFP's pipeline-level "
                                          "parallelism caps them (default: the CPU count, "
                                          "%(default)s here)")
    args = parser.parse_args(argv)
    from kfp_emulator import emulator as kfp_local  # heavy (kfp); after --help
    from kfp_emulator.run_result import failure_reason, nothing_new, retried, verdict
    try:
        spec = kfp_local.load_spec(args.package)
        root = args.pipeline_root or kfp_local.default_root(spec)
        if not root:
            raise UsageError(f"{args.package} has no defaultPipelineRoot: give --pipeline-root")
        result = kfp_local.run_pipeline(spec, root, keep_types=args.keep_types,
                                        enable_cache=not args.disable_cache,
                                        parallelism=args.parallelism)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except kfp_local.TaskFailed as e:
        print(f"error: {e}", file=sys.stderr)
        why = failure_reason(e.log)
        if why:
            print(f"failed: {e.task}: {why}")
        return EXIT_TASK_FAILED
    reason, judged, again = nothing_new(result), verdict(result), retried(result)
    if again:
        print(f"retried: {again}")
    if reason:
        print(f"nothing new: {reason}")
    if judged:
        print(f"verdict: {judged}")
    print(f"succeeded: {result.root}")  # last: callers read the run's root from it
    return EXIT_OK


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 1")
    return number


if __name__ == "__main__":
    sys.exit(main())
