"""ImageEvaluator's construction: its optional inputs beside the stock Evaluator's."""
import tensorflow_model_analysis as tfma
from tfx import types
from tfx.types import standard_artifacts

from components.image_evaluator.component import ImageEvaluator
from components.image_evaluator.settings import AuditSettings


def test_statistics_are_an_optional_input():
    statistics = types.Channel(type=standard_artifacts.ExampleStatistics)
    kwargs = dict(examples=types.Channel(type=standard_artifacts.Examples),
                  model=types.Channel(type=standard_artifacts.Model),
                  eval_config=tfma.EvalConfig(), allow_drift=False,
                  settings=AuditSettings(max_leakage_gain=None, min_robust_accuracy=None,
                                         max_slice_gap=None))
    assert ImageEvaluator(statistics=statistics, **kwargs).inputs["statistics"] is statistics
    assert "statistics" not in ImageEvaluator(**kwargs).inputs
