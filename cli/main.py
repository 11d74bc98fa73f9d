"""The `imagepipe` command line.

    imagepipe run                       # the bundled MNIST digits (timings: docs/performance.md)
    imagepipe plan --data DIR           # what a run would choose, and why
    imagepipe run --data DIR --output OUT
    imagepipe compile --target kubeflow --image IMAGE --pipeline-root gs://B/R --data gs://B/D
    imagepipe versions --output OUT     # pushed versions; which is served
    imagepipe rollback --output OUT [--to VERSION]
    imagepipe gc --output OUT [--keep-versions N] [--yes]   # delete what no kept version needs
    imagepipe monitor --output OUT --data WINDOW   # the served model on production traffic

Exit codes: 0 success, 2 bad input (flags, data, output dir), 1 pipeline failure,
3 `monitor` found the model alerting.
"""
import argparse
import gc
import os
import sys
import traceback
from typing import List, Optional

from components.image_example_gen.readers.folder_tree import DatasetError
from core.storage import files
from core.storage.files import StorageError
from modules.cluster.tf_config import ClusterConfigError
from settings import flags
from settings.config import ConfigError
from cli import commands
from core import startup
from core.errors import PipelineFailed, UsageError

EXIT_OK, EXIT_PIPELINE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_ALERTING = commands.EXIT_ALERTING  # `monitor`: the window's measures crossed a threshold


# Subcommands: (name, help, description); their flags are generated from the settings
# sections each takes (settings/flags.py COMMANDS).
_COMMANDS = (
    ("run", "ingest, validate, transform, train, evaluate and push",
     "Run the whole TFX pipeline locally (LocalDagRunner). "
     "Example: imagepipe run --data data/mnist_1k/png --output outputs"),
    ("ingest", "only ingest a dataset into TFRecords of tf.Example",
     "Run ImageExampleGen's ingestion alone: OUTPUT/<split>/data-*.tfrecord.gz "
     "(gzipped TFRecords), labels.txt and ingest_report.json. "
     "Example: imagepipe ingest --data data/mnist_1k/idx --output /tmp/mnist_tfr"),
    ("inspect", "check a dataset's health: duplicates, label conflicts, leakage, balance",
     "Hash every image as ingestion does and report exact and near duplicates, "
     "duplicates with different labels, eval images with a copy in train, and class "
     "counts; trains nothing and writes nothing into the data. Example: imagepipe "
     "inspect --data ~/photos --json health.json"),
    ("config", "print the effective config (defaults < --config file < flags)",
     "Print every setting as YAML, after applying --config and flags; the "
     "output is itself a valid --config file. Example: imagepipe config "
     "show --config flowers.yaml --train-steps 1000"),
    ("plan", "print the training plan for --data; trains nothing",
     "Resolve every setting left unset from the data and this machine "
     "(image size, channels, model, batch, epochs, learning-rate schedule, "
     "augmentation, blessing threshold), say why each was chosen, and check "
     "the training fits in memory. Flags given win over the plan. Example: "
     "imagepipe plan --data ~/photos"),
    ("compile", "compile the pipeline for Kubeflow Pipelines (GKE) or Vertex AI",
     "Write the same pipeline as `run`, for a cluster. kubeflow: a KFP "
     "PipelineSpec YAML (schema 2.1.0) for open-source Kubeflow Pipelines; "
     "vertex: a PipelineJob JSON for Vertex AI Pipelines. Needs no cloud "
     "credentials. Example: imagepipe compile --target kubeflow --image "
     "us-docker.pkg.dev/p/r/imagepipe:1 --pipeline-root gs://b/imagepipe "
     "--data gs://b/flowers --image-size 64 --channels 3 "
     "--accelerator tpu:tpu-v5-lite-podslice:2x4"),
    ("runs", "list the runs recorded in --output",
     "One line per run from ML Metadata: start time, eval accuracy, blessed, "
     "pushed version, data. Example: imagepipe runs --output outputs"),
    ("report", "write the HTML report of the latest run (run does it too)",
     "Write <output>/report/index.html and its PNGs (prediction gallery, "
     "confusion matrix, per-class accuracy, training curves, inputs after "
     "Transform) for the latest run in --output. Example: imagepipe report "
     "--output outputs"),
    ("versions", "list the pushed versions of a model; which is served",
     "One line per pushed version: its number, when it was pushed, the spans it was "
     "trained on, its eval accuracy, its TFLite version, and whether it is served "
     "(pinned by a rollback) or was rolled back. Example: imagepipe versions "
     "--output outputs --json versions.json"),
    ("rollback", "serve an earlier pushed version again",
     "Pin TF Serving (models.config) and the TFLite pointer to an earlier version, "
     "take the newer ones out of service, and record it in ML Metadata (when the "
     "output has a local store) so the next run's baseline is the served model; the "
     "next push of a new model lifts the pin. A compiled pipeline's --pipeline-root "
     "works as --output too. Default: the served version's predecessor. Example: "
     "imagepipe rollback --output outputs --to 1717171717"),
    ("gc", "delete what the served and the newest versions do not need",
     "Keep the served version, the pinned one and the --keep-versions newest (SavedModel "
     "and TFLite), the run and lineage behind each one's model, the newest run, and the "
     "span store's complete entries; delete older runs' artifacts, older versions, "
     "abandoned ingestion attempts and unfinished pushes, whole, never anything modified "
     "within --min-age. Locally the deleted artifacts are marked DELETED in ML Metadata, "
     "so no resolver or cache uses them. A dry run unless --yes. A compiled pipeline's "
     "--pipeline-root works as --output too. Example: imagepipe gc --output outputs "
     "--keep-versions 5 --min-age 2d --yes --json gc.json"),
    ("predict", "classify image files, a folder or TFRecords with a pushed model",
     "Print the top classes of each image, or with --data write one row per "
     "image of a folder or TFRecords with Apache Beam's RunInference. Examples: "
     "imagepipe predict --model outputs/serving/imagepipe digit.png photo.jpg; "
     "imagepipe predict --model outputs/serving/imagepipe --data photos/ "
     "--output predictions.jsonl"),
    ("monitor", "score a window of production traffic against the served model's reference",
     "Read a window of requests (a folder of images, TF Serving PredictionLogs, KServe, "
     "Vertex AI or proxy JSON lines, imagepipe predict's output), score the records that "
     "hold no answer with the served model (or --version), and compare the window with "
     "what the model was trained and evaluated on: input drift (brightness, size, "
     "grayscale), prediction drift, confidence, and with --labels accuracy. Writes "
     "monitor.json and monitor.html; exit 0 healthy, 3 alerting, 2 bad input. Example: "
     "imagepipe monitor --output outputs --data requests/ --since 24h"),
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with its subcommands, every flag generated from the settings."""
    parser = argparse.ArgumentParser(
        prog="imagepipe", description="TFX pipeline for image classification.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text, description in _COMMANDS:
        flags.add_flags(commands.add_parser(name, help=help_text, description=description),
                        name)
    return parser


def _quiet_libraries(verbose: bool) -> None:
    """Hide TensorFlow/absl/Beam chatter unless --verbose; errors still raise.

    Must run before TensorFlow is imported: TF reads TF_CPP_MIN_LOG_LEVEL once.
    """
    if verbose:
        return
    import logging
    import warnings

    from absl import logging as absl_logging
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    warnings.filterwarnings("ignore")
    logging.getLogger().setLevel(logging.ERROR)
    absl_logging.set_verbosity(absl_logging.ERROR)


def main(argv: Optional[List[str]] = None) -> int:
    """Console-script entry point; returns the process exit code."""
    startup.prepare()  # before TensorFlow or TFX is imported
    parser = build_parser()
    args = parser.parse_args(argv)
    # TFX's BaseBeamExecutor re-parses sys.argv with absl flags (TODO
    # b/174174381 upstream); our flags are parsed, so give absl none of them.
    del sys.argv[1:]
    try:
        config, own = flags.parse(args)
    except ConfigError as e:
        print(f"imagepipe: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    verbose = config.logging.verbose
    _quiet_libraries(verbose)
    run = config.run
    config = config.replace(output=files.absolute(run.output),
                            data=files.absolute(config.ingest.data),
                            state_dir=run.state_dir and files.absolute(run.state_dir))
    try:
        code = commands.COMMANDS[args.command](config, own)
    except (UsageError, DatasetError, StorageError, ClusterConfigError) as e:
        print(f"imagepipe: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except PipelineFailed as e:
        if verbose:
            traceback.print_exception(e.__cause__)
        print(f"imagepipe: {e}" + ("" if verbose else " (rerun with --verbose for "
                                   "the traceback and library logs)"), file=sys.stderr)
        return EXIT_PIPELINE_FAILED
    return code if isinstance(code, int) else EXIT_OK  # `monitor`: EXIT_ALERTING


def console_main() -> int:
    """The `imagepipe` command: main(), then a quick exit.

    After main() returns, the interpreter's teardown ran a full cyclic garbage
    collection over everything TensorFlow, TFX and Beam had loaded (py-spy:
    gc_collect_main once main had returned; seconds, docs/performance.md).
    Frozen objects are left out of collections, and the process is ending, so
    there is nothing to collect. Not in main(), which tests call
    many times in one process.
    """
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(console_main())
