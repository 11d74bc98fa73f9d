"""tf.Examples as ingestion writes them: one serialized, a split read back, and
ImageExampleGen's executor run on a folder, as on Kubeflow (no driver).

TensorFlow and TFX are imported inside the functions that use them.
"""
import os
from typing import List, Optional

from core.contract import FILENAME_KEY, IMAGE_KEY


def image_example(image: bytes, filename: Optional[str] = None) -> bytes:
    """A serialized tf.Example holding `image`'s encoded bytes (and its file name)."""
    import tensorflow as tf

    def as_feature(value: bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
    feature = {IMAGE_KEY: as_feature(image)}
    if filename is not None:
        feature[FILENAME_KEY] = as_feature(filename.encode())
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def read_split(uri: str, split: str) -> List:
    """The tf.Examples of an Examples artifact's split (gzipped TFRecords, local or gs://)."""
    import tensorflow as tf
    from core.storage import files
    paths = files.glob(os.path.join(str(uri), f"Split-{split}", "*"))
    return [tf.train.Example.FromString(record.numpy())
            for record in tf.data.TFRecordDataset(paths, compression_type="GZIP")]


def example_gen_properties(input_base, **config) -> dict:
    """ImageExampleGen's exec properties for `input_base`, its options from a PipelineConfig
    of `config`; the output format the pipeline sets (gzipped TFRecords)."""
    from tfx.proto import example_gen_pb2
    from components.image_example_gen.component import ImageExampleGen
    from settings.config import PipelineConfig
    options = PipelineConfig.from_values(**config).ingest_options()
    props = dict(ImageExampleGen(input_base=str(input_base), options=options).exec_properties)
    props["output_file_format"] = example_gen_pb2.FORMAT_TFRECORDS_GZIP
    return props


def run_example_gen(uri, props: dict):
    """ImageExampleGen's executor writing into `uri`, as on Kubeflow (no driver);
    returns its Examples artifact."""
    from tfx.types import standard_artifacts
    from components.image_example_gen.executor import Executor
    examples = standard_artifacts.Examples()
    examples.uri = str(uri)
    Executor().Do({}, {"examples": [examples]}, props)
    return examples


def ingest_folder(input_base, out_dir, eval_percent: int = 50, **config):
    """`run_example_gen` on `input_base` into `out_dir`, with `eval_percent` and `config`
    as the PipelineConfig's other values; returns the Examples artifact."""
    return run_example_gen(out_dir, example_gen_properties(
        input_base, eval_percent=eval_percent, **config))
