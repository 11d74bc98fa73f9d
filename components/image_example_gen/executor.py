"""TFX adapter: runs `IngestImages` inside TFX's ExampleGen executor machinery.

TFX's base executor supplies the Beam pipeline (with `beam_pipeline_args`),
writes each split as gzipped TFRecords and sets the artifact's split names;
this class only lists the tree and plugs in our PTransform.
"""
import os
from typing import Any, Dict, List

import tensorflow as tf
from tfx import types
from tfx.components.example_gen import base_example_gen_executor
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.image_example_gen.folder_tree import list_class_folders
from components.image_example_gen.ingest import LABELS_FILE, IngestImages, check_splits

# Private exec-property keys, set in Do() for GenerateExamplesByBeam(); TFX
# itself passes `_beam_pipeline_args` the same way.
_LISTING = "_imagepipe_listing"
_REPORT_DIR = "_imagepipe_report_dir"


class Executor(base_example_gen_executor.BaseExampleGenExecutor):
    """Ingests a class-per-folder image tree into split TFRecords of tf.Example."""

    def GetInputSourceToExamplePTransform(self):  # noqa: N802 (TFX API)
        """Unused: GenerateExamplesByBeam is overridden, since labels span splits."""
        raise NotImplementedError

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Lists the tree once, runs the Beam ingestion, and writes labels.txt."""
        examples = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.EXAMPLES_KEY])
        listing = list_class_folders(exec_properties[standard_component_specs.INPUT_BASE_KEY])
        props = dict(exec_properties, **{_LISTING: listing, _REPORT_DIR: examples.uri})
        super().Do(input_dict, output_dict, props)
        check_splits(examples.uri)
        with tf.io.gfile.GFile(os.path.join(examples.uri, LABELS_FILE), "w") as f:
            f.write("".join(name + "\n" for name in listing.classes))

    def GenerateExamplesByBeam(self, pipeline, exec_properties: Dict[str, Any]):  # noqa: N802
        """Returns {split name: PCollection of tf.Example}."""
        output_config = example_gen_pb2.Output()
        proto_utils.json_to_proto(
            exec_properties[standard_component_specs.OUTPUT_CONFIG_KEY], output_config)
        splits = output_config.split_config.splits
        buckets = [sum(s.hash_buckets for s in splits[:i + 1]) for i in range(len(splits))]
        return pipeline | "IngestImages" >> IngestImages(
            root=exec_properties[standard_component_specs.INPUT_BASE_KEY],
            listing=exec_properties[_LISTING],
            split_names=[s.name for s in splits],
            buckets=buckets,
            report_dir=exec_properties[_REPORT_DIR])
