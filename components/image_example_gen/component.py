"""ImageExampleGen: a TFX ExampleGen for class-per-folder image trees.

It is a FileBasedExampleGen with our executor, so it keeps TFX's driver: the
driver fingerprints the input files (names, sizes, mtimes) before the cache
lookup, so an unchanged tree is a cache hit and a changed file is a miss.
"""
from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec
from tfx.proto import example_gen_pb2

from components.image_example_gen import executor

# Files the driver fingerprints: <root>/<class>/<file>.
CLASS_TREE_PATTERN = "*/*"


class ImageExampleGen(FileBasedExampleGen):
    """Ingests images into `examples` (train/eval TFRecords of tf.Example).

    The examples artifact also holds `labels.txt` (class names in label-id
    order) and `ingest_report.json` (counts per split and class, skipped files).
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(self, input_base: str, eval_percent: int = 20):
        """Args:
          input_base: dataset root holding one folder per class.
          eval_percent: share of images hashed (by relative path) into `eval`.
        """
        if not 0 < eval_percent < 100:
            raise ValueError(f"eval_percent must be in 1..99, got {eval_percent}")
        super().__init__(
            input_base=input_base,
            input_config=example_gen_pb2.Input(splits=[
                example_gen_pb2.Input.Split(name="images", pattern=CLASS_TREE_PATTERN)]),
            output_config=example_gen_pb2.Output(split_config=example_gen_pb2.SplitConfig(
                splits=[
                    example_gen_pb2.SplitConfig.Split(name="train",
                                                      hash_buckets=100 - eval_percent),
                    example_gen_pb2.SplitConfig.Split(name="eval", hash_buckets=eval_percent),
                ])))
