"""TFX adapter: the stock Evaluator executor, minus a baseline that says it is empty,
plus the candidate's accuracy on its blessing, and the drift veto."""
import os
from typing import Any, Dict, List

from tfx import types
from tfx.components.evaluator import executor as evaluator_executor
from tfx.components.evaluator.constants import (ARTIFACT_PROPERTY_BLESSED_KEY as BLESSED_KEY,
                                                BLESSED_FILE_NAME as BLESSED_FILE,
                                                NOT_BLESSED_FILE_NAME as NOT_BLESSED_FILE)
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs

from components.contract import (ACCURACY_PROPERTY, INGEST_REPORT_FILE, NO_BASELINE,
                                 VETOED_PROPERTY)
from components.contract import read_ingest_report
from components.drift import drift_gate
from components.storage import files
from components.image_evaluator.accuracy import overall_accuracy

_BASELINE = standard_component_specs.BASELINE_MODEL_KEY
ALLOW_DRIFT_KEY = "allow_drift"


class Executor(evaluator_executor.Executor):
    """On a first run PushedBaseline still outputs a Model artifact (KFP needs one), marked
    empty. The stock executor would try to load it; without it, TFX drops the baseline
    model spec and the change threshold, as it does when a resolver finds nothing.

    The blessing then gets the candidate's overall accuracy (ACCURACY_PROPERTY), so the
    Pusher can record it in the version it pushes without reading TFMA's files."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        baseline = input_dict.get(_BASELINE) or []
        if baseline and baseline[0].get_int_custom_property(NO_BASELINE) == 1:
            input_dict = {**input_dict, _BASELINE: []}
        super().Do(input_dict, output_dict, exec_properties)
        blessing = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.BLESSING_KEY])
        accuracy = overall_accuracy(artifact_utils.get_single_instance(
            output_dict[standard_component_specs.EVALUATION_KEY]).uri)
        if accuracy is not None:
            blessing.set_float_custom_property(ACCURACY_PROPERTY, accuracy)
        _veto_drift(blessing, input_dict, exec_properties)


def _veto_drift(blessing, input_dict, exec_properties) -> None:
    """A model judged on a drifted newest span is not blessed, unless --allow-drift.

    The veto is here, not only in the Pusher: a blessed model is a later run's
    baseline and warm start, and one trained on drifted data must be neither.
    """
    examples = input_dict.get(standard_component_specs.EXAMPLES_KEY) or []
    uri = examples[0].uri if examples else None
    report = read_ingest_report(uri) if uri and files.exists(
        os.path.join(uri, INGEST_REPORT_FILE)) else {}
    blocked, _ = drift_gate(report, bool(exec_properties.get(ALLOW_DRIFT_KEY)))
    if blocked is None:
        return
    blessing.set_string_custom_property(VETOED_PROPERTY, blocked)  # blessed by TFMA or not
    if blessing.get_int_custom_property(BLESSED_KEY) != 1:
        return
    blessing.set_int_custom_property(BLESSED_KEY, 0)
    fileio.remove(os.path.join(blessing.uri, BLESSED_FILE))
    with fileio.open(os.path.join(blessing.uri, NOT_BLESSED_FILE), "w") as f:
        f.write("")
