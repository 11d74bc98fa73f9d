"""A real Transform output over a few ingested images, and a SavedModel exported over it.

Plain helpers for the `transformed` and `exported_model` fixtures in tests/conftest.py.
"""
import dataclasses
import os

import apache_beam as beam
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils
from tfx.components.trainer.fn_args_utils import DataAccessor
from tfx_bsl.public import tfxio

from core.contract import IMAGE_KEY, LABEL_KEY
from modules.params import TransformParams
from modules.preprocessing import preprocessing_fn
from settings.config import PipelineConfig
from pipeline.local.ingest_command import run_ingest

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


def ingest(tmp_path, make_image, channels, side=SIZE):
    """Twelve generated images of two classes, ingested into tmp_path/examples; (that
    folder, the images)."""
    mode = "L" if channels == 1 else "RGB"
    images = [make_image(tmp_path / "data" / f"c{i % 2}" / f"{i}.png", size=(side, side),
                         mode=mode, seed=i) for i in range(12)]
    out = tmp_path / "examples"
    run_ingest(PipelineConfig.from_values(data=str(tmp_path / "data"), output=str(out),
                                          eval_percent=40))
    return str(out), images


def transform(pattern: str, temp: str, out: str, channels: int) -> None:
    """What TFX's Transform executor writes with materialize=False: transform_fn and metadata."""
    schema = schema_utils.schema_from_feature_spec(RAW_SPEC)
    source = tfxio.TFExampleRecord(file_pattern=pattern, schema=schema)
    fn = lambda inputs: preprocessing_fn(  # noqa: E731
        inputs, TransformParams(SIZE, channels).to_custom_config())
    with tft_beam.Context(temp_dir=temp, force_tf_compat_v1=False):
        with beam.Pipeline() as pipeline:
            raw = pipeline | source.BeamSource()
            transform_fn = (raw, source.TensorAdapterConfig()) | tft_beam.AnalyzeDataset(fn)
            _ = transform_fn | tft_beam.WriteTransformFn(out)
    metadata_io.write_metadata(dataset_metadata.DatasetMetadata(schema),
                               os.path.join(out, tft.TFTransformOutput.RAW_METADATA_DIR))




def transformed_fixture(tmp_path, make_image, channels: int) -> Transformed:
    """The `transformed` fixture's value (tests/conftest.py)."""
    from tfx.components.util import tfxio_utils
    from tfx.types import artifact_utils, standard_artifacts
    examples_dir, images = ingest(tmp_path, make_image, channels)
    files = {s: f"{examples_dir}/{s}/*" for s in ("train", "eval")}
    transform(files["train"], str(tmp_path / "tft_tmp"), str(tmp_path / "tft"), channels)
    artifact = standard_artifacts.Examples()
    artifact.uri = examples_dir
    artifact.split_names = artifact_utils.encode_split_names(["train", "eval"])
    accessor = DataAccessor(
        tf_dataset_factory=tfxio_utils.get_tf_dataset_factory_from_artifact([artifact], []),
        record_batch_factory=None, data_view_decode_fn=None)
    return Transformed(examples_dir, files, tft.TFTransformOutput(str(tmp_path / "tft")),
                       accessor, images, channels)


@dataclasses.dataclass
class Exported:
    """A SavedModel as the Trainer exports it, and the Examples artifact it came from."""

    model_dir: str  # saved_model.pb, the three signatures, assets.extra
    examples_uri: str  # Split-train/, Split-eval/ as TFX lays them out
    images: list
    labels: list


def export_tiny_model(root, make_image, channels: int = 3) -> Exported:
    """An untrained CNN over 8x8 images, exported with the real Transform graph."""
    from modules.networks.small import build_cnn
    from modules.signatures import export
    examples_dir, images = ingest(root, make_image, channels)
    transform(f"{examples_dir}/train/*", str(root / "tft_tmp"), str(root / "tft"), channels)
    labels = ["c0", "c1"]
    model_dir = str(root / "model")
    export(build_cnn((SIZE, SIZE, channels), len(labels)), tft.TFTransformOutput(
        str(root / "tft")), labels, model_dir)
    for split in ("train", "eval"):
        os.rename(os.path.join(examples_dir, split), os.path.join(examples_dir, f"Split-{split}"))
    return Exported(model_dir, examples_dir, images, labels)
