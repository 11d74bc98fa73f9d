"""The Tuner's executor: TFX's search and outputs, then trials.json, choice.json and
holdout_results.json beside tuner_results.json."""
from typing import Any, Dict, List

from tfx import types
from tfx.components.tuner import executor as tuner_executor
from tfx.types import artifact_utils, standard_component_specs

from components.image_tuner.trials import NoTrialError, trial_rows, write_trials


class Executor(tuner_executor.Executor):
    """TFX's Tuner executor; TFX's tuner_results.json lists completed trials only."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        if tuner_executor.get_tune_args(exec_properties):
            raise ValueError("TuneArgs is not supported by this Tuner's Executor.")
        tuner = tuner_executor.search(input_dict, exec_properties, self._get_tmp_dir(),
                                      print_tuning_summary=False)
        rows = trial_rows(tuner)
        if not any(row["status"] == "COMPLETED" for row in rows):
            raise NoTrialError(rows)
        # Our tuner ranks the trial it chose first (modules/tuning/choice.py).
        tuner_executor.write_best_hyperparameters(tuner, output_dict)
        write_trials(artifact_utils.get_single_uri(
            output_dict[standard_component_specs.TUNER_RESULTS_KEY]), rows,
            getattr(tuner, "choice", None), getattr(tuner, "holdout_results", None))
