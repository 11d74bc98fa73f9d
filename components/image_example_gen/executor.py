"""TFX adapter: runs `IngestImages` inside TFX's ExampleGen executor machinery.

TFX's base executor supplies the Beam pipeline (with `beam_pipeline_args`),
writes each split as gzipped TFRecords and sets the artifact's split names;
this class lists the dataset, plugs in our PTransform and checks its report.
"""
from typing import Any, Dict, List

from tfx import types
from tfx.components.example_gen import base_example_gen_executor
from tfx.types import artifact_utils, standard_component_specs

from components.image_example_gen.formats import list_dataset
from components.image_example_gen.ingest import IngestImages, finish_ingest
from components.image_example_gen.options import IngestOptions

# The component's exec property with the reader options (JSON).
OPTIONS_KEY = "ingest_options"

# Private exec-property keys, set in Do() for GenerateExamplesByBeam(); TFX
# itself passes `_beam_pipeline_args` the same way.
_LISTING = "_imagepipe_listing"
_REPORT_DIR = "_imagepipe_report_dir"
_OPTIONS = "_imagepipe_options"


class Executor(base_example_gen_executor.BaseExampleGenExecutor):
    """Ingests an image dataset into train/eval TFRecords of tf.Example."""

    def GetInputSourceToExamplePTransform(self):  # noqa: N802 (TFX API)
        """Unused: GenerateExamplesByBeam is overridden, since labels span splits."""
        raise NotImplementedError

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Lists the data once, runs the Beam ingestion, checks it, writes labels.txt."""
        examples = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.EXAMPLES_KEY])
        options = IngestOptions.from_json(exec_properties.get(OPTIONS_KEY))
        listing = list_dataset(exec_properties[standard_component_specs.INPUT_BASE_KEY], options)
        props = dict(exec_properties, **{_LISTING: listing, _OPTIONS: options,
                                        _REPORT_DIR: examples.uri})
        super().Do(input_dict, output_dict, props)
        finish_ingest(examples.uri, options.strict)

    def GenerateExamplesByBeam(self, pipeline, exec_properties: Dict[str, Any]):  # noqa: N802
        """Returns {split name: PCollection of serialized tf.Example}."""
        return pipeline | "IngestImages" >> IngestImages(
            root=exec_properties[standard_component_specs.INPUT_BASE_KEY],
            listing=exec_properties[_LISTING],
            options=exec_properties[_OPTIONS],
            report_dir=exec_properties[_REPORT_DIR])
