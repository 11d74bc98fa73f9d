"""TFX adapter: runs `IngestImages` in a TFX Beam executor and records the output splits.

It replaces ExampleGen's base Do(), whose WriteSplit reshuffles every
record through Beam; `IngestImages` writes the gzipped TFRecord files itself
(see shard_writer.py), and this class sets the artifact properties that
BaseExampleGenExecutor would: split names, payload and file format.
"""
from typing import Any, Dict, List

from tfx import types
from tfx.components.example_gen import write_split
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_executor
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs

from core.contract import (NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT, SPANS_PROPERTY,
                           SPLITS, drift_entry)
from components.image_example_gen import span_ingest
from components.image_example_gen.driver import record_input_without_driver
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.ingest import IngestImages, finish_ingest
from components.image_example_gen.novelty import novelty
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.encoding.parallel import local_processes
from core.parameters import decode


def _record_span_properties(examples) -> None:
    """The driver's span and version custom properties, also as the typed properties
    that the Examples type declares: TFX's resolvers read those."""
    for name in ("span", "version"):
        if examples.has_custom_property(name):
            setattr(examples, name, examples.get_int_custom_property(name))


class Executor(base_beam_executor.BaseBeamExecutor):
    """Ingests an image dataset into train/eval TFRecords of tf.Example."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Lists the data once, runs the Beam ingestion, checks it, writes labels.txt."""
        examples = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.EXAMPLES_KEY])
        options = decode(IngestOptions, exec_properties)
        root = exec_properties[standard_component_specs.INPUT_BASE_KEY]
        window = record_input_without_driver(examples, exec_properties)
        _record_span_properties(examples)
        new, reason = novelty(examples, exec_properties)
        if not new:  # the later steps' condition is false: nothing to write for them
            print(f"ImageExampleGen: {reason}; the later steps are skipped", flush=True)
            examples.split_names = artifact_utils.encode_split_names([])
            return
        examples.split_names = artifact_utils.encode_split_names(list(SPLITS))
        split_dirs = {s: artifact_utils.get_split_uri([examples], s) for s in SPLITS}
        processes = local_processes(self._beam_pipeline_args)
        if window is not None:
            report = span_ingest.ingest_window(window, options, examples.uri, split_dirs,
                                               self._make_beam_pipeline, processes)
            examples.set_string_custom_property(SPANS_PROPERTY,
                                                span_ingest.window_names(report))
            if drift_entry(report)["compared"]:  # the two spans whole, for the drift check
                examples.split_names = artifact_utils.encode_split_names(
                    [*SPLITS, NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT])
        else:
            listing = list_dataset(root, options)
            with self._make_beam_pipeline() as pipeline:
                _ = pipeline | "IngestImages" >> IngestImages(
                    root=root, listing=listing, options=options, split_dirs=split_dirs,
                    report_dir=examples.uri, processes=processes)
            finish_ingest(examples.uri, options.strict)
        examples_utils.set_payload_format(examples, example_gen_pb2.FORMAT_TF_EXAMPLE)
        examples_utils.set_file_format(
            examples, write_split.to_file_format_str(example_gen_pb2.FORMAT_TFRECORDS_GZIP))
