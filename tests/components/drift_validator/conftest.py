"""Real statistics of tiny real examples: images encoded by ingestion's own functions,
profiled by StatisticsGen's executor once, then paired as a newest and a previous span."""
import io
import json
import os
import shutil

import numpy as np
import pytest
from PIL import Image

from core.contract import (INGEST_REPORT_FILE, NEWEST_SPAN_SPLIT,
                           PREVIOUS_SPAN_SPLIT)

PER_SPLIT = 40


def png(brightness: int, side: int = 16, gray: bool = False, seed: int = 0) -> bytes:
    """A noisy image of about `brightness`; colour (its channels apart, their luminance
    the same) unless `gray`."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(-6, 7, (side, side, 1))
    tint = np.zeros(3) if gray else np.array([-30, 10, 30])  # ITU-R 601: +0.3
    pixels = np.clip(brightness + tint + noise, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels[..., 0] if gray else pixels).save(buf, format="PNG")
    return buf.getvalue()


def _span(dogs=0.5, brightness=40, side=16, gray=0.0, with_brightness=True, seed=0):
    """PER_SPLIT (png bytes, class, with_brightness) rows: a share of dogs, of grayscale
    images; other seeds give other noise."""
    rows = []
    for i in range(PER_SPLIT):
        image = png(brightness + (i % 10) * 10, side, gray=i < gray * PER_SPLIT, seed=seed + i)
        rows.append((image, "dog" if i < dogs * PER_SPLIT else "cat", with_brightness))
    return rows


# The previous span, and newest spans that change one feature each (or none).
SPLITS = {"base": _span(), "same": _span(seed=1000), "bright": _span(brightness=150),
          "label": _span(dogs=0.9), "gray": _span(gray=1.0), "size": _span(side=32),
          "unlit": _span(with_brightness=False)}


def write_examples(root, splits, drift=None) -> str:
    """An Examples folder: Split-<name>/data.tfrecord.gz as ingestion encodes them, and an
    ingest report with `drift` as its drift entry."""
    import tensorflow as tf
    from components.image_example_gen.encoding import encode
    for split, rows in splits.items():
        os.makedirs(os.path.join(root, f"Split-{split}"))
        with tf.io.TFRecordWriter(os.path.join(root, f"Split-{split}", "data.tfrecord.gz"),
                                  "GZIP") as writer:
            for i, (image, name, with_brightness) in enumerate(rows):
                _, record, _, _ = encode.encode_image(image, split, f"{name}/{i}.png",
                                                      int(name == "dog"), name, 10**8)
                if not with_brightness:
                    example = tf.train.Example.FromString(record)
                    del example.features.feature[encode.BRIGHTNESS_KEY]
                    record = example.SerializeToString()
                writer.write(record)
    report = {"drift": drift} if drift is not None else {}
    with open(os.path.join(root, INGEST_REPORT_FILE), "w") as f:
        json.dump(report, f)
    return str(root)


def examples_artifact(uri: str, splits):
    from tfx.types import artifact_utils, standard_artifacts
    examples = standard_artifacts.Examples()
    examples.uri = uri
    examples.split_names = artifact_utils.encode_split_names(list(splits))
    return examples


def run_statistics_gen(examples, uri: str, tmp_dir: str):
    """StatisticsGen's executor as the DAG runs it (sketch-based top-k); the artifact."""
    import tensorflow_data_validation as tfdv
    from tfx.components.statistics_gen import executor as statistics_gen
    from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
    from tfx.types import standard_artifacts, standard_component_specs as keys
    from core.beam_deps import LOCAL_SETUP_FILE, with_setup_file
    from settings.config import LOCAL_BEAM_ARGS
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = uri
    context = BaseBeamExecutor.Context(
        beam_pipeline_args=with_setup_file(LOCAL_BEAM_ARGS.split(), LOCAL_SETUP_FILE),
        tmp_dir=tmp_dir)
    options = tfdv.StatsOptions(use_sketch_based_topk_uniques=True)
    statistics_gen.Executor(context).Do(
        {keys.EXAMPLES_KEY: [examples]}, {keys.STATISTICS_KEY: [statistics]},
        {keys.STATS_OPTIONS_JSON_KEY: options.to_json(), keys.EXCLUDE_SPLITS_KEY: "[]"})
    return statistics


@pytest.fixture(scope="session")
def profiled(tmp_path_factory):
    """The statistics folder of every split in SPLITS, profiled in one Beam run."""
    root = tmp_path_factory.mktemp("drift_examples")
    examples = examples_artifact(write_examples(str(root / "examples"), SPLITS), SPLITS)
    statistics = run_statistics_gen(examples, str(root / "statistics"), str(root / "tmp"))
    return statistics.uri


def paired(profiled_uri: str, target: str, newest: str, previous: str = "base"):
    """An ExampleStatistics with `newest` as the newest_span split and `previous` as the
    previous_span split."""
    from tfx.types import artifact_utils, standard_artifacts
    for split, source in ((NEWEST_SPAN_SPLIT, newest), (PREVIOUS_SPAN_SPLIT, previous)):
        shutil.copytree(os.path.join(profiled_uri, f"Split-{source}"),
                        os.path.join(target, f"Split-{split}"))
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = target
    statistics.split_names = artifact_utils.encode_split_names(
        [NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT])
    return statistics
