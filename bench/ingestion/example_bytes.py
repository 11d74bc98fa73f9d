"""Bytes on disk per example, 224x224 RGB: raw examples (our choice) against materialized Transform.

    bash scripts/bench.sh ingestion/example_bytes  # 64 images (run time: docs/performance.md)

Transform runs with materialize=False: only the ingested examples (the
original JPEG bytes plus a few small features, gzipped) are stored, and the
Trainer applies the transform graph on the fly. This measures that against
the alternative, materialize=True, which would store each transformed image
as 224*224*3 float32 values, and against the raw uint8 pixels
(224*224*3 = 150,528 bytes), the yardstick (goal: at most 2x).
The JPEGs are photo-like (smooth, quality 90). Writes bench/results/storage.json.
"""
import argparse
import glob
import os
import shutil
import tempfile

import numpy as np
from PIL import Image

from bench.common import machine_info, print_table, write_results

SIDE = 224


def make_photos(root: str, count: int) -> None:
    """`count` smooth RGB JPEGs of SIDE pixels, in 2 classes."""
    rng = np.random.default_rng(0)
    for i in range(count):
        folder = os.path.join(root, f"class_{i % 2}")
        os.makedirs(folder, exist_ok=True)
        coarse = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
        Image.fromarray(coarse).resize((SIDE, SIDE), Image.BICUBIC).save(
            os.path.join(folder, f"{i:04d}.jpg"), quality=90)


def _bytes(pattern: str) -> int:
    return sum(os.path.getsize(p) for p in glob.glob(pattern))


def materialized_bytes(examples: str, work: str) -> int:
    """Runs the real preprocessing_fn with TFT and writes what materialize=True would."""
    import tensorflow as tf
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

    from core.contract import IMAGE_KEY, LABEL_KEY
    from modules.params import TransformParams
    from modules.preprocessing import preprocessing_fn
    from core.contract import IMAGE_XF, LABEL_XF
    records = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(
        glob.glob(f"{examples}/*/*.gz"), compression_type="GZIP")]
    raw = [{IMAGE_KEY: [r.features.feature[IMAGE_KEY].bytes_list.value[0]],
            LABEL_KEY: [r.features.feature[LABEL_KEY].int64_list.value[0]]} for r in records]
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec({
        IMAGE_KEY: tf.io.FixedLenFeature([1], tf.string),
        LABEL_KEY: tf.io.FixedLenFeature([1], tf.int64)}))
    config = TransformParams(SIDE, 3).to_custom_config()
    fn = lambda inputs: preprocessing_fn(inputs, config)  # noqa: E731
    with tft_beam.Context(temp_dir=os.path.join(work, "tft"), force_tf_compat_v1=False):
        (rows, _), _ = (raw, metadata) | tft_beam.AnalyzeAndTransformDataset(fn)
    path = os.path.join(work, "transformed.tfrecord.gz")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type="GZIP")) as writer:
        for row in rows:
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                IMAGE_XF: tf.train.Feature(float_list=tf.train.FloatList(
                    value=np.asarray(row[IMAGE_XF]).reshape(-1))),
                LABEL_XF: tf.train.Feature(int64_list=tf.train.Int64List(
                    value=[int(row[LABEL_XF])]))})).SerializeToString())
    return os.path.getsize(path)


def main(argv=None) -> dict:
    """Ingests generated photos, measures both layouts, prints and writes the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=64)
    args = parser.parse_args(argv)
    from settings.config import PipelineConfig
    from pipeline.local.ingest_command import run_ingest
    work = tempfile.mkdtemp(prefix="imagepipe-bench-storage-")
    try:
        make_photos(os.path.join(work, "photos"), args.count)
        examples = os.path.join(work, "examples")
        run_ingest(PipelineConfig.from_values(data=os.path.join(work, "photos"), output=examples))
        raw_uint8 = SIDE * SIDE * 3
        sizes = {"raw uint8 pixels (yardstick)": raw_uint8 * args.count,
                 "ingested examples (materialize=False, ours)":
                     _bytes(f"{examples}/*/*.tfrecord.gz"),
                 "materialized float32 (materialize=True)": materialized_bytes(examples, work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [{"layout": name, "bytes_per_example": total / args.count,
             "ratio_to_raw_uint8": total / args.count / raw_uint8}
            for name, total in sizes.items()]
    print_table(rows, ["layout", "bytes_per_example", "ratio_to_raw_uint8"])
    return write_results("storage", {"machine": machine_info(), "images": args.count,
                                     "side": SIDE, "rows": rows})


if __name__ == "__main__":
    main()
