"""A real Transform output over a few ingested images, for the Trainer-side tests."""
import dataclasses
import os

import apache_beam as beam
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils
from tfx.components.trainer.fn_args_utils import DataAccessor
from tfx.components.util import tfxio_utils
from tfx.types import artifact_utils, standard_artifacts
from tfx_bsl.public import tfxio

from components.image_example_gen.encode import IMAGE_KEY, LABEL_KEY
from modules.preprocessing import preprocessing_fn
from pipeline.config import PipelineConfig
from pipeline.ingest_runner import run_ingest

SIZE = 8
RAW_SPEC = {IMAGE_KEY: tf.io.FixedLenFeature([1], tf.string),
            LABEL_KEY: tf.io.FixedLenFeature([1], tf.int64)}


@dataclasses.dataclass
class Transformed:
    """Ingested examples (both splits) and the Transform output computed over train."""

    examples_dir: str
    files: dict  # split -> file pattern
    tft_output: tft.TFTransformOutput
    data_accessor: DataAccessor
    images: list  # paths of the source images
    channels: int
    size: int = SIZE


def _ingest(tmp_path, make_image, channels):
    mode = "L" if channels == 1 else "RGB"
    images = [make_image(tmp_path / "data" / f"c{i % 2}" / f"{i}.png", size=(SIZE, SIZE),
                         mode=mode, seed=i) for i in range(12)]
    out = tmp_path / "examples"
    run_ingest(PipelineConfig(data=str(tmp_path / "data"), output=str(out), eval_percent=40))
    return str(out), images


def _transform(pattern: str, temp: str, out: str, channels: int) -> None:
    """What TFX's Transform executor writes with materialize=False: transform_fn and metadata."""
    schema = schema_utils.schema_from_feature_spec(RAW_SPEC)
    source = tfxio.TFExampleRecord(file_pattern=pattern, schema=schema)
    fn = lambda inputs: preprocessing_fn(  # noqa: E731
        inputs, {"image_size": SIZE, "channels": channels})
    with tft_beam.Context(temp_dir=temp, force_tf_compat_v1=False):
        with beam.Pipeline() as pipeline:
            raw = pipeline | source.BeamSource()
            transform_fn = (raw, source.TensorAdapterConfig()) | tft_beam.AnalyzeDataset(fn)
            _ = transform_fn | tft_beam.WriteTransformFn(out)
    metadata_io.write_metadata(dataset_metadata.DatasetMetadata(schema),
                               os.path.join(out, tft.TFTransformOutput.RAW_METADATA_DIR))


@pytest.fixture(params=[1, 3], ids=["gray", "rgb"])
def transformed(request, tmp_path, make_image) -> Transformed:
    """Twelve 8x8 PNGs in two classes, ingested and analyzed, in 1 or 3 channels."""
    channels = request.param
    examples_dir, images = _ingest(tmp_path, make_image, channels)
    files = {s: f"{examples_dir}/{s}/*" for s in ("train", "eval")}
    _transform(files["train"], str(tmp_path / "tft_tmp"), str(tmp_path / "tft"), channels)
    artifact = standard_artifacts.Examples()
    artifact.uri = examples_dir
    artifact.split_names = artifact_utils.encode_split_names(["train", "eval"])
    accessor = DataAccessor(
        tf_dataset_factory=tfxio_utils.get_tf_dataset_factory_from_artifact([artifact], []),
        record_batch_factory=None, data_view_decode_fn=None)
    return Transformed(examples_dir, files, tft.TFTransformOutput(str(tmp_path / "tft")),
                       accessor, images, channels)
