"""ImageExampleGen: a TFX ExampleGen for image datasets.

It keeps the FileBasedExampleGen contract (spec, output splits, TFRecords of
tf.Example), adds one typed exec property per reader option, and uses a
driver whose input fingerprint sees every file, so an unchanged dataset is a
cache hit and any changed, added, removed or moved file is a miss.
"""
from typing import Optional

from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import example_gen_pb2
from tfx.types import channel, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ExecutionParameter

from core.contract import EVAL, TRAIN
from components.image_example_gen import executor
from components.image_example_gen.driver import ImageExampleGenDriver
from components.image_example_gen.novelty import PIPELINE_DIGEST_KEY, SERVING_DIR_KEY
from components.image_example_gen.options import IngestOptions
from core.parameters import encode, execution_parameters


class ImageExampleGenSpec(standard_component_specs.FileBasedExampleGenSpec):
    """FileBasedExampleGen's parameters, one per IngestOptions field, and what decides
    whether the inputs are new (novelty.py)."""

    PARAMETERS = {**standard_component_specs.FileBasedExampleGenSpec.PARAMETERS,
                  **execution_parameters(IngestOptions),
                  SERVING_DIR_KEY: ExecutionParameter(type=str, optional=True),
                  PIPELINE_DIGEST_KEY: ExecutionParameter(type=str, optional=True)}


class ImageExampleGen(base_beam_component.BaseBeamComponent):
    """Ingests images into `examples` (train/eval TFRecords of tf.Example).

    The examples artifact also holds `labels.txt` (class names in label-id
    order) and `ingest_report.json` (counts per split and class, skipped files).
    """

    SPEC_CLASS = ImageExampleGenSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
    DRIVER_CLASS = ImageExampleGenDriver

    def __init__(self, input_base: str, options: IngestOptions,
                 serving_dir: Optional[str] = None, pipeline_digest: str = ""):
        """Args:
          input_base: dataset root (a folder, or an .npz/TFRecord file).
          options: format, strictness, pixel limit, keys and eval share.
          serving_dir: the push destination, whose judged record says whether the
            inputs are new (None: always new).
          pipeline_digest: the compiled pipeline's digest (`imagepipe compile` sets it).
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
            **{SERVING_DIR_KEY: serving_dir, PIPELINE_DIGEST_KEY: pipeline_digest},
            **encode(options))
        super().__init__(spec=spec)
