"""TFX adapter: the stock Evaluator executor, then the accuracy, the audit, the monitoring
reference and the vetoes."""
import json
from typing import Any, Dict, List, Optional

from tfx import types
from tfx.components.evaluator import executor as evaluator_executor
from tfx.types import artifact_utils, standard_component_specs as specs

from core.contract import (ACCURACY_PROPERTY, JUDGED_ON_PROPERTY, NO_BASELINE, REASON_PROPERTY,
                           SLICE_KEYS)
from components.image_evaluator.accuracy import (overall_accuracy, overall_figures,
                                                 slice_accuracies)
from components.image_evaluator.monitoring_reference import write_reference
from components.image_evaluator.settings import AuditSettings, settings_of
from components.image_evaluator.vetoes import blessed_by_tfma, judge_drift, veto
from components.image_evaluator.audit.audit import PREDICTIONS, run_audit, write_audit
from components.image_evaluator.audit.gates import accuracy_gates

ALLOW_DRIFT_KEY = "allow_drift"
DRIFT_KEY = "drift"  # optional: the ImageDistributionValidator's ExampleAnomalies
STATISTICS_KEY = "statistics"  # optional: StatisticsGen's ExampleStatistics


class Executor(evaluator_executor.Executor):
    """The stock executor, then the blessing's accuracy, the audit and the vetoes.

    On a first run PushedBaseline still outputs a Model artifact (KFP needs one), marked
    empty. The stock executor would try to load it; without it, TFX drops the baseline
    model spec and the change threshold, as it does when a resolver finds nothing.

    The blessing then gets the candidate's overall accuracy (ACCURACY_PROPERTY), so the
    Pusher can record it in the version it pushes without reading TFMA's files; the
    drift verdict, when given one, goes onto the blessing too; the audit
    (components/image_evaluator/audit/) writes audit.json; its predictions and the train
    statistics become the blessing's monitoring reference (monitoring_reference.py),
    which the Pusher ships in the version; a drifted span or a failed audit gate
    un-blesses the model. TFMA holds the accuracy of every eval image to the threshold;
    the audit holds the accuracy without the leaked ones to it too, and the blessing
    records which figure was judged (JUDGED_ON_PROPERTY): a leak can only refuse, never
    bless a model TFMA refused.
    """

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        baseline = input_dict.get(specs.BASELINE_MODEL_KEY) or []
        if baseline and baseline[0].get_int_custom_property(NO_BASELINE) == 1:
            input_dict = {**input_dict, specs.BASELINE_MODEL_KEY: []}
        super().Do(input_dict, output_dict, exec_properties)
        blessing = artifact_utils.get_single_instance(output_dict[specs.BLESSING_KEY])
        evaluation = artifact_utils.get_single_instance(output_dict[specs.EVALUATION_KEY])
        accuracy = overall_accuracy(evaluation.uri)
        if accuracy is not None:
            blessing.set_float_custom_property(ACCURACY_PROPERTY, accuracy)
        examples = input_dict[specs.EXAMPLES_KEY][0].uri
        drift = (input_dict.get(DRIFT_KEY) or [None])[0]
        drifted = judge_drift(drift.uri if drift else None, blessing,
                              exec_properties.get(ALLOW_DRIFT_KEY))
        reasons = [drifted] if drifted else []
        baseline = (input_dict.get(specs.BASELINE_MODEL_KEY) or [None])[0]
        result = audit(artifact_utils.get_single_instance(input_dict[specs.MODEL_KEY]).uri,
                       examples, evaluation.uri, blessing.uri, settings_of(exec_properties),
                       accuracy, baseline.uri if baseline else None)
        if "judged_on" in result:
            blessing.set_string_custom_property(JUDGED_ON_PROPERTY,
                                                json.dumps(result["judged_on"]))
        statistics, seen = (input_dict.get(STATISTICS_KEY) or [None])[0], result[PREDICTIONS]
        write_reference(blessing.uri, seen.names, seen.labels, seen.probabilities, accuracy,
                        statistics.uri if statistics else None)
        reasons += result["blocked"]
        if reasons:
            veto(blessing, "; ".join(reasons))
        elif not blessed_by_tfma(blessing.uri):  # the Pusher and judged.json say why
            blessing.set_string_custom_property(REASON_PROPERTY, "; ".join(
                result.get("accuracy_blocked") or []) or "TFMA's validation refused it")


def audit(model_uri: str, examples_uri: str, evaluation_uri: str, blessing_uri: str,
          settings: AuditSettings, overall: Optional[float],
          baseline_uri: Optional[str] = None) -> dict:
    """Runs the audit, writes audit.json (and audit/) into both folders; returns the audit
    (its gates' reasons under "blocked", its predictions under PREDICTIONS).

    The gates hold TFMA's accuracy and its change from the baseline to the thresholds as
    typed (`settings`), exactly (audit/gates.py accuracy_gates): TFMA's own float
    validator only pre-filters. An error in the audit fails the Evaluator: a model must
    not pass gates that were never checked. `baseline_uri`: the baseline Model, which the
    audit scores on the same images for the paired difference (None on a first run).
    """
    try:
        result = run_audit(model_uri, examples_uri, settings, overall,
                           slice_accuracies(evaluation_uri, SLICE_KEYS),
                           settings.accuracy_threshold, baseline_uri=baseline_uri)
    except Exception as e:
        raise RuntimeError(f"ImageEvaluator: the model audit of {model_uri} failed "
                           f"({type(e).__name__}: {e}); see "
                           "components/image_evaluator/audit/") from e
    gates, blocked = accuracy_gates(settings, overall_figures(evaluation_uri))
    result["gates"] = {**gates, **result["gates"]}
    # Only where TFMA blessed: they refuse what its float comparison wrongly passed, and a
    # model TFMA refused already has TFMA's reason, which the report shows.
    if blessed_by_tfma(blessing_uri):
        result["blocked"] = blocked + result["blocked"]
    result["accuracy_blocked"] = blocked  # why TFMA refused, in the gates' words
    for folder in (evaluation_uri, blessing_uri):
        write_audit(result, folder)
    return result
