"""The data contract between imagepipe's stages: keys, file names, split paths, readers.

Every stage imports this module instead of importing another stage to read
that stage's output, as TFX's `standard_component_specs` and
`artifact_utils.get_split_uri` serve its components. It imports nothing
heavy (no TensorFlow, Beam or TFX): ingestion's encoding workers and the
CLI import it too. Readers go through core/storage, which opens local
paths with Python's `open` and imports a remote client only for a URI.
"""
import json
import os
from typing import List, Optional

from core.storage import files

# --- Features of the ingested tf.Examples (the tensorflow/tpu convention) ---
IMAGE_KEY = "image/encoded"
FORMAT_KEY = "image/format"
HEIGHT_KEY = "image/height"
WIDTH_KEY = "image/width"
CHANNELS_KEY = "image/channels"
LABEL_KEY = "image/class/label"  # int64, 0-based, in labels.txt order
CLASS_TEXT_KEY = "image/class/text"
FILENAME_KEY = "image/filename"
# float: the image's mean luminance, 0..255 (ITU-R 601 weights, on a thumbnail), so that
# StatisticsGen profiles it and the DistributionValidator compares it between spans.
BRIGHTNESS_KEY = "image/brightness"
# Slices the Evaluator reports accuracy on (components/image_example_gen/data_health/slices.py):
# bytes features that ingestion derives from each image, and the user's group.
SIZE_SLICE_KEY = "image/slice/size"
COLOR_SLICE_KEY = "image/slice/color"
ASPECT_SLICE_KEY = "image/slice/aspect"
GROUP_KEY = "image/group"  # only with --groups
SLICE_KEYS = (SIZE_SLICE_KEY, COLOR_SLICE_KEY, ASPECT_SLICE_KEY, GROUP_KEY)

# --- Features after Transform (modules/preprocessing.py) ---
IMAGE_XF = "image"
LABEL_XF = "label"

# --- Splits of the examples artifact ---
TRAIN = "train"
EVAL = "eval"
SPLITS = (TRAIN, EVAL)
# Two more in a span window whose previous span was ingested: every example of the
# newest span, and of the span before it. StatisticsGen profiles them as any split,
# and the DistributionValidator compares the two (components/drift_validator/).
NEWEST_SPAN_SPLIT = "newest_span"
PREVIOUS_SPAN_SPLIT = "previous_span"

# --- Component ids of the DAG (pipeline/dag.py sets them) ---
# Components are addressed by these in ML Metadata, summary.json, the logs and
# the pipeline root's folders (<pipeline root>/<id>/<output>/<execution>/).
EXAMPLE_GEN_ID = "ImageExampleGen"
STATISTICS_GEN_ID = "StatisticsGen"
SCHEMA_GEN_ID = "SchemaGen"
EXAMPLE_VALIDATOR_ID = "ExampleValidator"
TRANSFORM_ID = "Transform"
TUNER_ID = "Tuner"  # only with --tune, between Transform and the Trainer
TRAINER_ID = "Trainer"
BASELINE_ID = "latest_blessed_model_resolver"  # a resolver (local runs)
WARM_START_ID = "warm_start_model_resolver"  # the Trainer's base model (local runs)
PUSHED_BASELINE_ID = "pushed_baseline"  # not a resolver, so not named like one (open-source KFP)
PUSHED_WARM_START_ID = "pushed_warm_start"  # the Trainer's base model on KFP and Vertex
DRIFT_VALIDATOR_ID = "DistributionValidator"  # the newest span against the previous
EVALUATOR_ID = "Evaluator"
INFRA_VALIDATOR_ID = "InfraValidator"  # the serving check, before anything is converted
TFLITE_CONVERTER_ID = "TFLiteConverter"
MODEL_CARD_ID = "ModelCardGenerator"
PUSHER_ID = "Pusher"
# In the order a local run executes them: TFX runs the DAG layer by layer, and the
# warm-start resolver needs only ImageExampleGen's output.
COMPONENT_IDS = (EXAMPLE_GEN_ID, STATISTICS_GEN_ID, WARM_START_ID, SCHEMA_GEN_ID,
                 EXAMPLE_VALIDATOR_ID, TRANSFORM_ID, TRAINER_ID, BASELINE_ID, EVALUATOR_ID,
                 INFRA_VALIDATOR_ID, TFLITE_CONVERTER_ID, MODEL_CARD_ID, PUSHER_ID)

# --- ImageExampleGen's span store: <pipeline root>/<EXAMPLE_GEN_ID>/<SPAN_STORE_DIR> ---
SPAN_STORE_DIR = "spans"

# --- Files beside the example splits (written by ImageExampleGen) ---
LABELS_FILE = "labels.txt"  # class names in label-id order, one per line
INGEST_REPORT_FILE = "ingest_report.json"  # counts per split and class, skipped files
# The ingest report's key for duplicates, conflicts, leakage and class counts.
DATA_HEALTH_KEY = "data_health"
# The ingest report's key, in a span window, for the spans whose drift is judged:
# {"span", "previous_span" (or None), "compared": whether the examples hold both spans'
# splits, "reason": why not, or None} (`drift_entry`).
DRIFT_KEY = "drift"
# The drift verdict (components/drift_validator/verdict.py): written by the DistributionValidator
# in its ExampleAnomalies, and copied by the Evaluator into the ModelBlessing's folder.
DRIFT_FILE = "drift.json"
# The Evaluator's audit (components/image_evaluator/audit/): written in the Evaluation
# artifact, and copied into the ModelBlessing's folder for the Pusher's model card.
AUDIT_FILE = "audit.json"
AUDIT_DIR = "audit"  # beside it: saliency maps and suspects' thumbnails
# A SavedModel's folder for files beside the model, which TF Serving ignores (its
# warmup requests live there too): labels, the model card, the monitoring reference.
ASSETS_EXTRA = "assets.extra"
# In the pushed SavedModel's assets.extra/: the model card (Model Card Toolkit schema).
MODEL_CARD_JSON = "model_card.json"
MODEL_CARD_HTML = "model_card.html"
# What `imagepipe monitor` compares production traffic with: written by the Evaluator into
# its ModelBlessing's MONITORING_DIR, copied by the Pusher into the version's
# assets.extra/MONITORING_DIR. The reference holds the eval split's predictions (class
# names, accuracy, predicted class, top probability, true class per image); the train
# statistics are StatisticsGen's DatasetFeatureStatisticsList of the train split.
MONITORING_DIR = "monitoring"
MONITOR_REFERENCE_FILE = "reference.json"
TRAIN_STATISTICS_FILE = "train_statistics.pb"

# --- The release stages' outputs (pipeline/dag.py wires them into the Pusher) ---
TFLITE_MODEL_KEY = "tflite_model"  # TFLiteConverter's: a Model holding model.tflite
MODEL_CARD_KEY = "model_card"  # ModelCardGenerator's: a File holding model_card.json
# The verdicts they record on those outputs: whether the stage made its file, and why.
CONVERTED_PROPERTY, WRITTEN_PROPERTY, REASON_PROPERTY = "converted", "written", "reason"
TFLITE_PARITY_PROPERTY, TFLITE_METADATA_PROPERTY = "tflite_parity", "tflite_metadata"
QUANTIZE_PROPERTY = "quantize"
# The InfraValidator's: the check's figures as JSON, and InfraValidator's own flag for
# a blessing that holds the stamped model (tfx/components/infra_validator/executor.py).
SERVING_CHECK_PROPERTY, INFRA_MODEL_FLAG = "serving_check", "has_model"
# A TFLite folder's files: the model (written last, so its presence means complete) and
# what an app needs besides it.
TFLITE_MODEL_FILE, TFLITE_INFO_FILE = "model.tflite", "model_info.json"

# --- Custom properties one stage sets and later ones read ---
# On a ModelBlessing the Evaluator un-blessed: why (a drifted newest span).
VETOED_PROPERTY = "vetoed"
# On the DistributionValidator's ExampleAnomalies: the verdict ("ok", "drift", "not
# compared"); on the ModelBlessing of an Evaluator given it: the whole verdict, as JSON.
DRIFT_VERDICT_PROPERTY = "drift_verdict"
DRIFT_PROPERTY = "drift"
# On every ModelBlessing: the candidate's overall accuracy (float), which the Pusher records.
ACCURACY_PROPERTY = "accuracy"
# On every ModelBlessing: the accuracy its threshold was held to, as JSON (audit.json's
# "judged_on"): without the leaked eval images whenever any were leaked and any are left.
JUDGED_ON_PROPERTY = "judged_on"
# On the Examples of a {SPAN} pattern: the window's spans, "1,2,3", beside TFX's `span`.
SPANS_PROPERTY = "spans"
# ImageExampleGen's verdict on its inputs (components/image_example_gen/novelty.py): the
# steps after it run only when NEW_DATA_PROPERTY is 1 (pipeline/dag.py's condition).
NEW_DATA_PROPERTY = "new_data"
NEW_DATA_REASON_PROPERTY = "new_data_reason"
INPUTS_DIGEST_PROPERTY = "inputs_digest"  # what the Pusher records as judged
# ...and where: the push destination whose judged.json holds the record. The serving check
# records an infrastructure failure there (components/image_pusher/judged_inputs.py).
JUDGED_IN_PROPERTY = "judged_in"
# On the PushedModel: what the Pusher decided (pushed, model, data) and why
# (components/image_pusher/refusal.py); summary.json and kubeflow/run_local.py show both.
VERDICT_PROPERTY, VERDICT_REASON_PROPERTY = "verdict", "verdict_reason"

# --- Files in the exported SavedModel (written by the Trainer) ---
NORMALIZATION_FILE = "normalization.json"  # in assets.extra/: Transform's mean and std

# --- The Trainer's decode cache: one folder per execution, named with its process ---
# The local runner removes the folders whose process has exited (a killed
# Trainer's), never a live one's (pipeline/local/state.py).
DECODE_CACHE_DIR = "decode_cache"


def decode_cache_folder(root: str, execution: str, pid: int) -> str:
    """The cache folder of one Trainer execution, owned by process `pid`."""
    return os.path.join(root, f"{execution}.pid{pid}")


def decode_cache_owner(name: str) -> Optional[int]:
    """The process id in a cache folder's name, or None if it is not one."""
    head, _, pid = name.rpartition(".pid")
    return int(pid) if head and pid.isdigit() else None


# --- Custom properties of artifacts, read by another stage ---
# On a baseline Model from PushedBaseline: 1 when no pushed model was found
# (KFP needs an artifact either way); the Evaluator then runs without one.
NO_BASELINE = "no_baseline"

# --- The SavedModel's signatures (modules/signatures.py) ---
SERVING_DEFAULT = "serving_default"  # serialized tf.Example in; what the Evaluator scores
SERVING_IMAGE = "serving_image"  # encoded image bytes in; REST and batch prediction
SERVING_TENSOR = "serving_tensor"  # float pixels in [0, 255] at the model's size; TFLite
IMAGE_BYTES_INPUT = "image_bytes"  # serving_image's input
PIXELS_INPUT = "pixels"  # serving_tensor's input
PROBABILITIES = "probabilities"  # every signature's per-class output


def split_dir(examples_uri: str, split: str) -> str:
    """The folder of one split's TFRecords: TFX's `get_split_uri` without artifacts."""
    return os.path.join(examples_uri, f"Split-{split}")


def split_of(file_pattern: str) -> str:
    """The split name in a split file pattern such as FnArgs.train_files' `<uri>/Split-train/*`."""
    return os.path.basename(os.path.dirname(file_pattern))[len("Split-"):]


def examples_uri_of(file_pattern: str) -> str:
    """The examples artifact's URI from a split file pattern `<uri>/Split-<name>/*`."""
    return os.path.dirname(os.path.dirname(file_pattern))


def read_labels(path: str) -> List[str]:
    """Class names in label-id order from a labels.txt file."""
    return [line for line in files.read_text(path).splitlines() if line.strip()]


def read_ingest_report(examples_uri: str) -> dict:
    """The ingest_report.json beside the example splits."""
    return json.loads(files.read_text(os.path.join(examples_uri, INGEST_REPORT_FILE)))


def ingest_report(examples_uri: Optional[str]) -> dict:
    """The Examples' ingest_report.json, or {} (no examples, or another ExampleGen's)."""
    if not examples_uri or not files.exists(os.path.join(examples_uri, INGEST_REPORT_FILE)):
        return {}
    return read_ingest_report(examples_uri)


def drift_entry(report: dict) -> Optional[dict]:
    """The ingest report's DRIFT_KEY entry, its keys all present; None outside a span
    window (a single dataset, another ExampleGen's examples)."""
    entry = report.get(DRIFT_KEY)
    if not entry:
        return None
    return {"span": entry.get("span"), "previous_span": entry.get("previous_span"),
            "compared": bool(entry.get("compared")), "reason": entry.get("reason")}


def read_drift(uri: Optional[str]) -> Optional[dict]:
    """The drift verdict (DRIFT_FILE) in an artifact's folder, or None without one."""
    path = os.path.join(uri, DRIFT_FILE) if uri else None
    return json.loads(files.read_text(path)) if path and files.exists(path) else None


def split_size(examples_uri: str, split: str) -> int:
    """Examples in one split, from the ingest report; 0 if another ExampleGen wrote them."""
    return int(ingest_report(examples_uri).get("splits", {}).get(split, 0))
