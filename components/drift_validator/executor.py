"""TFX adapter: TFX's DistributionValidator executor on the newest and the previous span.

The statistics are both TFX's `statistics` and its `baseline_statistics`, with the
one split pair (newest_span, previous_span). Where ImageExampleGen wrote no such
splits, TFX's executor would raise (a missing split pair), so it is not run: the
verdict says "not compared", and why. Either way the ExampleAnomalies gets
drift.json (components/drift_validator/verdict.py's shape) and the verdict as a custom property.
"""
import json
import os
from typing import Any, Dict, List

from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx import types
from tfx.components.distribution_validator import executor as tfx_executor
from tfx.components.statistics_gen import stats_artifact_utils
from tfx.types import artifact_utils, standard_component_specs as keys
from tfx.utils import json_utils

from core import tfx_internals
from core.contract import (DRIFT_FILE, DRIFT_VERDICT_PROPERTY, NEWEST_SPAN_SPLIT,
                           PREVIOUS_SPAN_SPLIT, drift_entry, ingest_report)
from core.parameters import decode
from core.storage import files
from components.drift_validator import comparators, judge
from components.drift_validator.settings import DriftSettings

EXAMPLES_KEY = keys.EXAMPLES_KEY  # ImageExampleGen's: its ingest report's drift entry
PAIR = f"{NEWEST_SPAN_SPLIT}_{PREVIOUS_SPAN_SPLIT}"  # TFX's SplitPair-<test>_<baseline>


class Executor(tfx_executor.Executor):
    """Compares the newest span's statistics with the previous span's, or says why not."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Writes the verdict (drift.json, `drift_verdict`); TFX's executor runs only when
        both spans' splits were profiled."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        statistics = artifact_utils.get_single_instance(input_dict[keys.STATISTICS_KEY])
        output = artifact_utils.get_single_instance(output_dict[keys.ANOMALIES_KEY])
        examples = (input_dict.get(EXAMPLES_KEY) or [None])[0]
        entry = drift_entry(ingest_report(examples.uri if examples else None))
        reason = judge.why_not_compared(
            entry, artifact_utils.decode_split_names(statistics.split_names))
        if reason:
            verdict = judge.not_compared(entry, reason)
        else:
            verdict = self._compare(statistics, output_dict, entry,
                                    decode(DriftSettings, exec_properties))
        files.write_text(os.path.join(output.uri, DRIFT_FILE),
                         json.dumps(verdict, indent=2, ensure_ascii=False) + "\n")
        output.set_string_custom_property(DRIFT_VERDICT_PROPERTY, verdict["verdict"])

    def _compare(self, statistics: types.Artifact,
                 output_dict: Dict[str, List[types.Artifact]], entry: dict,
                 settings: DriftSettings) -> dict:
        """TFX's executor on the one split pair; the verdict from what it wrote."""
        newest, previous = (
            stats_artifact_utils.load_statistics(statistics, split).proto().datasets[0]
            for split in (NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT))
        present = comparators.feature_names(newest) & comparators.feature_names(previous)
        # Its return value is dropped: TFX then records output_dict's artifacts, with
        # the custom properties set after it.
        super().Do({keys.STATISTICS_KEY: [statistics], keys.BASELINE_STATISTICS_KEY: [statistics]},
                   output_dict,
                   {keys.INCLUDE_SPLIT_PAIRS_KEY: json_utils.dumps(
                       [(NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT)]),
                    keys.DISTRIBUTION_VALIDATOR_CONFIG_KEY:
                        comparators.validator_config(settings, present)})
        output = artifact_utils.get_single_instance(output_dict[keys.ANOMALIES_KEY])
        anomalies = anomalies_pb2.Anomalies.FromString(files.read_bytes(os.path.join(
            output.uri, f"SplitPair-{PAIR}", tfx_executor.DEFAULT_FILE_NAME)))
        return judge.verdict(entry, anomalies, previous, newest, settings)
