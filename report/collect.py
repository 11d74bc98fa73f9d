"""What the report shows, read back from a finished run: its artifacts, not the runner's memory.

The gallery shows the first eval images as the Evaluator's audit predicted
them (the monitoring reference it writes into its blessing, blessed or not),
so that the report does not load the model and predict them again. Where
the audit read a sample spread over a larger split, or the run has no
reference, the Trainer's model predicts them. The samples go through the run's
own Transform graph; the curves come from the Trainer's TensorBoard event files.
"""
import json
import os
from typing import Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from core.contract import (EVAL, EVALUATOR_ID, IMAGE_KEY, LABEL_KEY,
                           MONITOR_REFERENCE_FILE, MONITORING_DIR, TRAINER_ID,
                           TRANSFORM_ID, split_dir, split_size)
from core.storage import files
from report import metadata
from settings.config import PipelineConfig

MAX_EVAL = 512  # eval images for the gallery and the samples: enough to find mistakes, quick
GALLERY = 32
SAMPLES_PER_CLASS = 6
MAX_SAMPLE_CLASSES = 20


def artifact_uris(config: PipelineConfig) -> Dict[str, str]:
    """{artifact type name: uri} of the latest run's Transform, Trainer and Evaluator
    outputs."""
    store = metadata.open_store(config)
    nodes = metadata.latest_run(store, config.run.pipeline_name)
    uris = {}
    for node in (TRANSFORM_ID, TRAINER_ID, EVALUATOR_ID):
        if node in nodes:
            uris.update({name: artifact.uri for name, artifact in
                         metadata.outputs(store, nodes[node]).items()})
    return uris


def eval_records(examples_uri: str, limit: int = MAX_EVAL) -> List[bytes]:
    paths = files.glob(os.path.join(split_dir(examples_uri, EVAL), "*.gz"))
    dataset = tf.data.TFRecordDataset(paths, compression_type="GZIP").take(limit)
    return [record.numpy() for record in dataset]


def _parse(records: List[bytes]) -> Tuple[List[bytes], np.ndarray]:
    spec = {IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
            LABEL_KEY: tf.io.FixedLenFeature([], tf.int64)}
    parsed = tf.io.parse_example(tf.constant(records), spec)
    return list(parsed[IMAGE_KEY].numpy()), parsed[LABEL_KEY].numpy()


def audited_predictions(examples_uri: str, blessing_uri: Optional[str],
                        labels: np.ndarray) -> Optional[np.ndarray]:
    """The class ids the Evaluator's audit predicted for the eval split's first records,
    whose `labels` the caller parsed, from the monitoring reference it wrote; None when
    there is none, or when the audit read a sample spread over the split, whose entries
    are other records."""
    path = blessing_uri and os.path.join(blessing_uri, MONITORING_DIR, MONITOR_REFERENCE_FILE)
    if not path or not files.exists(path):
        return None
    audited = json.loads(files.read_text(path))["eval"]
    if (audited["count"] != split_size(examples_uri, EVAL)
            or audited["label"][:len(labels)] != [int(label) for label in labels]):
        return None
    return np.asarray(audited["predicted"][:len(labels)], np.int64)


def _model_predictions(model_uri: str, records: List[bytes]) -> np.ndarray:
    """The class ids the Trainer's model predicts for `records`."""
    from core.contract import SERVING_DEFAULT
    from tfx.utils import path_utils
    serve = tf.saved_model.load(path_utils.serving_model_dir(model_uri)).signatures[
        SERVING_DEFAULT]
    return np.concatenate([serve(examples=tf.constant(records[i:i + 64]))["class_id"]
                           .numpy() for i in range(0, len(records), 64)])


def gallery_inputs(uris: Dict[str, str], examples_uri: str, records: List[bytes],
                   classes: List[str]) -> Tuple[List[np.ndarray], List[str], List[str]]:
    """(images, actual, predicted) for up to GALLERY eval images, mistakes first.

    `uris`: artifact_uris(); `records`: the split's first ones (eval_records). The
    predictions are the audit's (audited_predictions), else the model's. Each image is
    shown at the model's input size, as it saw it (before normalization): decoded at
    full size, 32 camera photos would take gigabytes of pixels and a larger canvas still.
    """
    import tensorflow_transform as tft
    from core.images import decode_images
    from core.contract import IMAGE_XF
    encoded, labels = _parse(records)
    predicted = audited_predictions(examples_uri, uris.get("ModelBlessing"), labels)
    if predicted is None:
        predicted = _model_predictions(uris["Model"], records)
    wrong = [i for i in range(len(labels)) if predicted[i] != labels[i]]
    right = [i for i in range(len(labels)) if predicted[i] == labels[i]]
    chosen = sorted(wrong[:GALLERY // 2] + right[:GALLERY - len(wrong[:GALLERY // 2])])
    size, _, channels = tft.TFTransformOutput(uris["TransformGraph"]).transformed_feature_spec(
    )[IMAGE_XF].shape
    images = list(decode_images(tf.constant([encoded[i] for i in chosen], tf.string),
                                size, channels).numpy())
    return (images, [classes[labels[i]] for i in chosen],
            [classes[predicted[i]] for i in chosen])


def transformed_samples(transform_uri: str, records: List[bytes],
                        classes: List[str]) -> Dict[str, List[np.ndarray]]:
    """Up to SAMPLES_PER_CLASS eval images per class, through the run's Transform graph."""
    import tensorflow_transform as tft
    from core.contract import IMAGE_XF
    _, labels = _parse(records)
    picked: Dict[int, List[int]] = {}
    for i, label in enumerate(labels):
        if len(picked.get(label, [])) < SAMPLES_PER_CLASS and (
                label in picked or len(picked) < MAX_SAMPLE_CLASSES):
            picked.setdefault(label, []).append(i)
    output = tft.TFTransformOutput(transform_uri)
    raw = tf.io.parse_example(tf.constant(records), output.raw_feature_spec())
    images = output.transform_features_layer()(raw)[IMAGE_XF].numpy()
    return {classes[label]: [images[i] for i in picked[label]] for label in sorted(picked)}


def head_epochs(training: Optional[dict]) -> Optional[int]:
    """Epochs run in a fine-tuning's first phase (head only), or None for one phase."""
    phases = (training or {}).get("phases") or []
    if len(phases) < 2:
        return None
    return len(phases[0]["epoch_seconds"])


def training_history(model_run_uri: str) -> Dict[str, Dict[str, Dict[int, float]]]:
    """{"train"|"validation": {"loss"|"accuracy": {epoch (from 1): value}}} from the event
    files: by epoch, because the Trainer may validate only some epochs."""
    history: Dict[str, Dict[str, Dict[int, float]]] = {}
    for split in ("train", "validation"):
        by_step: Dict[str, Dict[int, float]] = {"loss": {}, "accuracy": {}}
        for path in files.glob(os.path.join(model_run_uri, split, "events.out.*")):
            for event in tf.compat.v1.train.summary_iterator(path):
                for value in event.summary.value:
                    metric = value.tag[len("epoch_"):]
                    if value.tag.startswith("epoch_") and metric in by_step:
                        by_step[metric][event.step + 1] = float(tf.make_ndarray(value.tensor))
        history[split] = {m: dict(sorted(s.items())) for m, s in by_step.items()}
    return history
