"""ImageExampleGen: a TFX ExampleGen for image datasets.

It keeps the FileBasedExampleGen contract (spec, output splits, TFRecords of
tf.Example), adds one typed exec property per reader option, and uses a
driver whose input fingerprint sees every file, so an unchanged dataset is a
cache hit and any changed, added, removed or moved file is a miss.
"""
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import example_gen_pb2
from tfx.types import channel, standard_artifacts, standard_component_specs

from components.common.contract import EVAL, TRAIN
from components.image_example_gen import executor
from components.image_example_gen.driver import ImageExampleGenDriver
from components.image_example_gen.options import IngestOptions
from components.common.parameters import encode, execution_parameters


class ImageExampleGenSpec(standard_component_specs.FileBasedExampleGenSpec):
    """FileBasedExampleGen's parameters plus one per IngestOptions field."""

    PARAMETERS = {**standard_component_specs.FileBasedExampleGenSpec.PARAMETERS,
                  **execution_parameters(IngestOptions)}


class ImageExampleGen(base_beam_component.BaseBeamComponent):
    """Ingests images into `examples` (train/eval TFRecords of tf.Example).

    The examples artifact also holds `labels.txt` (class names in label-id
    order) and `ingest_report.json` (counts per split and class, skipped files).
    """

    SPEC_CLASS = ImageExampleGenSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
    DRIVER_CLASS = ImageExampleGenDriver

    def __init__(self, input_base: str, options: IngestOptions):
        """Args:
          input_base: dataset root (a folder, or an .npz/TFRecord file).
          options: format, strictness, pixel limit, keys and eval share.
        """
        # The executor decides splits from the data (split folders, IDX
        # train/t10k files, npz keys, or a hash); the driver only needs one
        # input split whose pattern it can glob.
        input_config = example_gen_pb2.Input(splits=[
            example_gen_pb2.Input.Split(name="all", pattern="*")])
        output_config = example_gen_pb2.Output(split_config=example_gen_pb2.SplitConfig(splits=[
            example_gen_pb2.SplitConfig.Split(name=TRAIN, hash_buckets=options.buckets[0]),
            example_gen_pb2.SplitConfig.Split(name=EVAL, hash_buckets=100 - options.buckets[0]),
        ]))
        spec = ImageExampleGenSpec(
            input_base=input_base, input_config=input_config, output_config=output_config,
            output_data_format=example_gen_pb2.FORMAT_TF_EXAMPLE,
            output_file_format=example_gen_pb2.FORMAT_TFRECORDS_GZIP,
            examples=channel.Channel(type=standard_artifacts.Examples),
            **encode(options))
        super().__init__(spec=spec)
