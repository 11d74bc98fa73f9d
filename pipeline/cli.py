"""The `imagepipe` command line.

    imagepipe run                       # the bundled MNIST digits (timings: docs/performance.md)
    imagepipe plan --data DIR           # what a run would choose, and why
    imagepipe run --data DIR --output OUT
    imagepipe compile --target kubeflow --image IMAGE --pipeline-root gs://B/R --data gs://B/D
    imagepipe versions --output OUT     # pushed versions; which is served
    imagepipe rollback --output OUT [--to VERSION]
    imagepipe monitor --output OUT --data WINDOW   # the served model on production traffic

Exit codes: 0 success, 2 bad input (flags, data, output dir), 1 pipeline failure,
3 `monitor` found the model alerting.
"""
import argparse
import dataclasses
import gc
import os
import sys
import traceback
import typing
from typing import List, Optional

from components.image_example_gen.readers.folder_tree import DatasetError
from components.common.storage import files
from components.common.storage.files import StorageError
from modules.cluster.tf_config import ClusterConfigError
from pipeline.config import LOCAL_BEAM_ARGS, ConfigError, PipelineConfig, config_fields, flag_help
from pipeline import commands, startup
from pipeline.errors import PipelineFailed, UsageError

EXIT_OK, EXIT_PIPELINE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_ALERTING = commands.EXIT_ALERTING  # `monitor`: the window's measures crossed a threshold


def _flag_type(field: dataclasses.Field):
    """The argparse type for a config field: its type, unwrapping Optional."""
    hint = typing.get_type_hints(PipelineConfig)[field.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


# The config fields `imagepipe ingest` uses; `run` uses them all.
INGEST_FIELDS = ("data", "output", "format", "strict", "max_pixels", "image_key", "label_key",
                 "eval_percent", "dedupe", "groups", "beam_args", "verbose")
# The config fields `imagepipe monitor` uses: where the model is, the input-drift
# thresholds (the span drift check's), and the ingestion's pixel limit.
MONITOR_FIELDS = ("output", "model_name", "drift_brightness", "drift_size", "drift_grayscale",
                  "max_pixels", "verbose")
# The config fields `imagepipe inspect` uses: how to read the data, and the split.
INSPECT_FIELDS = ("data", "format", "max_pixels", "image_key", "label_key", "eval_percent",
                  "beam_args", "verbose")


def add_config_flags(parser: argparse.ArgumentParser, names=None) -> None:
    """One flag per config field; defaults shown, but applied later by `config_from_args`."""
    for field in config_fields():
        if names is not None and field.name not in names:
            continue
        flag = "--" + field.name.replace("_", "-")
        help_text = flag_help(field)
        kind = _flag_type(field)
        if kind is bool:
            # A planned switch (default None) can be turned off as well as on.
            action = argparse.BooleanOptionalAction if field.default is None else "store_true"
            parser.add_argument(flag, action=action, default=None, help=help_text)
        else:
            parser.add_argument(flag, type=kind, default=None, help=help_text,
                                choices=field.metadata.get("choices"), metavar=field.name.upper())


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    """The defaults, overridden by the --config file, overridden by every flag given."""
    from pipeline.config_file import load_config_file
    from_file = load_config_file(args.config) if getattr(args, "config", None) else {}
    given = {f.name: getattr(args, f.name) for f in config_fields()
             if getattr(args, f.name, None) is not None}
    return PipelineConfig(**{**from_file, **given})


def add_config_file_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="YAML or TOML file of settings (same names as the flags); "
                             "flags override it. Example: --config flowers.yaml")


# Subcommands: (name, help, description, the config fields they take as
# flags (None: all), whether they take --config); _OWN_FLAGS adds the rest.
_COMMANDS = (
    ("run", "ingest, validate, transform, train, evaluate and push",
     "Run the whole TFX pipeline locally (LocalDagRunner). "
     "Example: imagepipe run --data data/mnist_1k/png --output outputs", None, True),
    ("ingest", "only ingest a dataset into TFRecords of tf.Example",
     "Run ImageExampleGen's ingestion alone: OUTPUT/<split>/data-*.tfrecord.gz "
     "(gzipped TFRecords), labels.txt and ingest_report.json. "
     "Example: imagepipe ingest --data data/mnist_1k/idx --output /tmp/mnist_tfr",
     INGEST_FIELDS, True),
    ("inspect", "check a dataset's health: duplicates, label conflicts, leakage, balance",
     "Hash every image as ingestion does and report exact and near duplicates, "
     "duplicates with different labels, eval images with a copy in train, and class "
     "counts; trains nothing and writes nothing into the data. Example: imagepipe "
     "inspect --data ~/photos --json health.json", INSPECT_FIELDS, True),
    ("config", "print the effective config (defaults < --config file < flags)",
     "Print every setting as YAML, after applying --config and flags; the "
     "output is itself a valid --config file. Example: imagepipe config "
     "show --config flowers.yaml --train-steps 1000", None, True),
    ("plan", "print the training plan for --data; trains nothing",
     "Resolve every setting left unset from the data and this machine "
     "(image size, channels, model, batch, epochs, learning-rate schedule, "
     "augmentation, blessing threshold), say why each was chosen, and check "
     "the training fits in memory. Flags given win over the plan. Example: "
     "imagepipe plan --data ~/photos", None, True),
    ("compile", "compile the pipeline for Kubeflow Pipelines (GKE) or Vertex AI",
     "Write the same pipeline as `run`, for a cluster. kubeflow: a KFP "
     "PipelineSpec YAML (schema 2.1.0) for open-source Kubeflow Pipelines; "
     "vertex: a PipelineJob JSON for Vertex AI Pipelines. Needs no cloud "
     "credentials. Example: imagepipe compile --target kubeflow --image "
     "us-docker.pkg.dev/p/r/imagepipe:1 --pipeline-root gs://b/imagepipe "
     "--data gs://b/flowers --image-size 64 --channels 3 "
     "--accelerator tpu:tpu-v5-lite-podslice:2x4",
     tuple(f.name for f in config_fields() if f.name != "output"), True),
    ("runs", "list the runs recorded in --output",
     "One line per run from ML Metadata: start time, eval accuracy, blessed, "
     "pushed version, data. Example: imagepipe runs --output outputs",
     ("output", "pipeline_name", "verbose"), False),
    ("report", "write the HTML report of the latest run (run does it too)",
     "Write <output>/report/index.html and its PNGs (prediction gallery, "
     "confusion matrix, per-class accuracy, training curves, inputs after "
     "Transform) for the latest run in --output. Example: imagepipe report "
     "--output outputs", ("output", "pipeline_name", "verbose"), False),
    ("versions", "list the pushed versions of a model; which is served",
     "One line per pushed version: its number, when it was pushed, the spans it was "
     "trained on, its eval accuracy, its TFLite version, and whether it is served "
     "(pinned by a rollback) or was rolled back. Example: imagepipe versions "
     "--output outputs --json versions.json",
     ("output", "model_name", "verbose"), False),
    ("rollback", "serve an earlier pushed version again",
     "Pin TF Serving (models.config) and the TFLite pointer to an earlier version, "
     "take the newer ones out of service, and record it in ML Metadata (when the "
     "output has a local store) so the next run's baseline is the served model; the "
     "next push of a new model lifts the pin. A compiled pipeline's --pipeline-root "
     "works as --output too. Default: the served version's predecessor. Example: "
     "imagepipe rollback --output outputs --to 1717171717",
     ("output", "model_name", "pipeline_name", "state_dir", "verbose"), False),
    ("predict", "classify image files, a folder or TFRecords with a pushed model",
     "Print the top classes of each image, or with --data write one row per "
     "image of a folder or TFRecords with Apache Beam's RunInference. Examples: "
     "imagepipe predict --model outputs/serving/imagepipe digit.png photo.jpg; "
     "imagepipe predict --model outputs/serving/imagepipe --data photos/ "
     "--output predictions.jsonl", ("image_key",), False),
    ("monitor", "score a window of production traffic against the served model's reference",
     "Read a window of requests (a folder of images, TF Serving PredictionLogs, KServe, "
     "Vertex AI or proxy JSON lines, imagepipe predict's output), score the records that "
     "hold no answer with the served model (or --version), and compare the window with "
     "what the model was trained and evaluated on: input drift (brightness, size, "
     "grayscale), prediction drift, confidence, and with --labels accuracy. Writes "
     "monitor.json and monitor.html; exit 0 healthy, 3 alerting, 2 bad input. Example: "
     "imagepipe monitor --output outputs --data requests/ --since 24h",
     MONITOR_FIELDS, False),
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="imagepipe", description="TFX pipeline for image classification.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text, description, fields, with_file in _COMMANDS:
        command = commands.add_parser(name, help=help_text, description=description)
        if name in _OWN_FLAGS:
            _OWN_FLAGS[name](command)
        if with_file:
            add_config_file_flag(command)
        add_config_flags(command, fields)
    return parser


def _predict_flags(predict: argparse.ArgumentParser) -> None:
    """`predict`'s own flags."""
    predict.add_argument("--model", required=True,
                         help="a SavedModel version folder, a serving base folder (latest "
                              "version), or a .tflite file with labels.txt beside it "
                              "(image files only)")
    predict.add_argument("--top-k", type=int, default=3, help="classes shown per image")
    predict.add_argument("images", nargs="*", metavar="IMAGE", help="image files")
    predict.add_argument("--data", dest="predict_data", default=None, metavar="DATA",
                         help="instead of IMAGE...: a folder of images (walked recursively) "
                              "or TFRecords of tf.Example (a file, a folder or a glob). "
                              "Example: --data photos/")
    predict.add_argument("--output", dest="predict_output", default=None, metavar="FILE",
                         help="with --data: the predictions, .jsonl (one JSON object per "
                              "line) or .csv. Example: --output predictions.csv")
    predict.add_argument("--log", dest="predict_log", default=None, metavar="FILE",
                         help="with IMAGE...: also write each request and its answer to "
                              "FILE, a TF Serving PredictionLog TFRecord (local or gs://), "
                              "which `imagepipe monitor` reads. Example: --log requests.tfrecord")
    predict.add_argument("--beam-args", default=None,
                         help="with --data: Apache Beam pipeline options, space-separated; "
                              "write it with '='. Example: --beam-args='--runner="
                              "DataflowRunner --project=P --region=R --temp_location=gs://B/tmp' "
                              f"(default: {LOCAL_BEAM_ARGS})")
    predict.add_argument("--verbose", action="store_true", default=None,
                         help="show library logs and tracebacks")


def _compile_flags(compile_: argparse.ArgumentParser) -> None:
    """`compile`'s own flags (--config and the config flags are added by build_parser)."""
    compile_.add_argument("--target", required=True, choices=("kubeflow", "vertex"),
                          help="kubeflow (open-source KFP on GKE) or vertex")
    compile_.add_argument("--image", required=True,
                          help="the pipeline image, built from kubeflow/Dockerfile")
    compile_.add_argument("--pipeline-root", required=True,
                          help="where runs write (gs://...): TFX artifacts under tfx/, "
                               "pushed models under serving/ and tflite/")
    compile_.add_argument("--accelerator", default=None,
                          help="the Trainer's accelerator: tpu:TYPE:TOPOLOGY (e.g. "
                               "tpu:tpu-v5-lite-podslice:2x4) or gpu:TYPE:COUNT (e.g. "
                               "gpu:nvidia-tesla-t4:1); default: CPU")
    for name, example in (("project", "my-project"), ("region", "us-central1"),
                          ("temp-location", "gs://b/tmp")):
        compile_.add_argument(f"--dataflow-{name}", default=None,
                              help=f"run Beam stages on Dataflow: its {name.replace('-', ' ')} "
                                   f"(all three --dataflow flags together). Example: {example}")
    compile_.add_argument("--vertex-project", default=None,
                          help="with --target vertex and --workers N > 1: the Trainer runs as "
                               "a Vertex AI custom job in this project (pool 0 the chief, "
                               "pool 1 the other workers). Example: my-project")
    compile_.add_argument("--vertex-region", default=None,
                          help="that job's region. Example: us-central1")
    compile_.add_argument("--machine-type", default="n1-standard-8",
                          help="that job's machines (--accelerator adds its GPUs)")
    compile_.add_argument("--trainer-memory", default=None,
                          help="memory of each machine that trains: what sizes the decode "
                               "cache, and the limit of the Trainer's pod or of each TFJob "
                               "replica (a Vertex custom job's machines are --machine-type). "
                               "Default: the --machine-type's for a Vertex custom job, else "
                               "8G. Example: 32G")
    compile_.add_argument("--output-file", default=None,
                          help="default: <pipeline-name>-<target>.yaml (kubeflow) or .json")
    compile_.add_argument("--monitor", action="store_true",
                          help="compile the scheduled monitoring pipeline instead: one step "
                               "running `imagepipe monitor` on the model served under "
                               "--pipeline-root (docs/monitoring.md#scheduled-monitoring)")


def _versions_flags(versions: argparse.ArgumentParser) -> None:
    """`versions`' own flag."""
    versions.add_argument("--json", dest="versions_json", default=None, metavar="FILE",
                          help="also write the listing as JSON (local or gs://). "
                               "Example: --json versions.json")


def _rollback_flags(rollback: argparse.ArgumentParser) -> None:
    """`rollback`'s own flag."""
    rollback.add_argument("--to", type=int, default=None, metavar="VERSION",
                          help="the version to serve (see imagepipe versions); default: the "
                               "served version's predecessor")


def _inspect_flags(inspect: argparse.ArgumentParser) -> None:
    """`inspect`'s own flag."""
    inspect.add_argument("--json", dest="inspect_json", default=None, metavar="FILE",
                         help="also write the findings as JSON (local or gs://). "
                              "Example: --json health.json")


def _monitor_flags(monitor: argparse.ArgumentParser) -> None:
    """`monitor`'s own flags, and one per MonitorSettings threshold (defaults there)."""
    from pipeline.monitoring.settings import MonitorSettings
    monitor.add_argument("--data", dest="monitor_data", required=True, metavar="WINDOW",
                         help="the window: a file, folder or glob, local or gs://. "
                              "Example: --data gs://b/requests/")
    for flag, metavar, text in _MONITOR_OWN:
        monitor.add_argument(f"--{flag}", dest=f"monitor_{flag}", default=None,
                             type=int if flag == "version" else str, metavar=metavar,
                             help=text)
    for field in dataclasses.fields(MonitorSettings):
        monitor.add_argument("--" + field.name.replace("_", "-"), dest=field.name,
                             type=type(field.default), default=None,
                             metavar=field.name.upper(),
                             help=f"{field.metadata['help']} (default: {field.default})")


# `monitor`'s own flags but --data: (flag, metavar, help); dest monitor_<flag>.
_MONITOR_OWN = (
    ("json", "FILE", "where monitor.json goes (local or gs://); default: "
                     "OUTPUT/monitoring/MODEL_NAME/monitor.json"),
    ("version", "VERSION", "the pushed version to judge (see imagepipe versions); "
                           "default: the served one"),
    ("labels", "FILE", "true classes of some records, CSV id,label or JSON lines "
                       '{"id","label"}: adds the accuracy. Example: --labels labels.csv'),
    ("format", "NAME", "the window's format (images, prediction_log, kserve, vertex, rest, "
                       "imagepipe); default: told from its first files"),
    ("since", "DURATION", "only files modified within this long. Example: --since 24h"),
    ("pushgateway", "URL", "also push the measures to this Prometheus Pushgateway. "
                           "Example: --pushgateway http://pushgateway:9091"),
    ("report", "FILE", "where monitor.html goes; default: beside monitor.json"),
)


def _config_action(show: argparse.ArgumentParser) -> None:
    show.add_argument("action", choices=["show"], help="show: print the effective config")


_OWN_FLAGS = {"config": _config_action, "compile": _compile_flags, "predict": _predict_flags,
              "versions": _versions_flags, "rollback": _rollback_flags,
              "inspect": _inspect_flags, "monitor": _monitor_flags}


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
        config = config_from_args(args)
    except ConfigError as e:
        parser.exit(EXIT_BAD_INPUT, f"imagepipe: error: {e}\n")
    _quiet_libraries(config.verbose)
    config = config.replace(output=files.absolute(config.output), data=files.absolute(config.data),
                            state_dir=config.state_dir and files.absolute(config.state_dir))
    try:
        code = commands.COMMANDS[args.command](config, args)
    except (UsageError, DatasetError, StorageError, ClusterConfigError) as e:
        print(f"imagepipe: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except PipelineFailed as e:
        if config.verbose:
            traceback.print_exception(e.__cause__)
        print(f"imagepipe: {e}" + ("" if config.verbose else " (rerun with --verbose for "
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
