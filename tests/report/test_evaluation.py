"""report.evaluation.accuracies: which of TFMA's metrics the report shows."""
from core.contract import LABEL_KEY
from components.image_evaluator.accuracy import ACCURACY_METRIC as ACCURACY
from report import evaluation


def test_overall_per_model_and_per_label_of_the_candidate_only(monkeypatch):
    values = [  # (model, slice, metric, value), as metric_values yields them
        ("candidate", (), ACCURACY, 0.9), ("baseline", (), ACCURACY, 0.8),
        ("candidate", (), "example_count", 100.0),
        ("candidate", ((LABEL_KEY, "3"),), ACCURACY, 0.7),
        ("baseline", ((LABEL_KEY, "3"),), ACCURACY, 0.1),
        ("candidate", ((LABEL_KEY, "3"), ("source", "scan")), ACCURACY, 0.2),  # a cross
        ("candidate", (("source", "scan"),), ACCURACY, 0.3),
    ]
    monkeypatch.setattr(evaluation, "metric_values", lambda uri: iter(values))
    overall, per_label = evaluation.accuracies("unused")
    assert overall == {"candidate": 0.9, "baseline": 0.8}
    assert per_label == {3: 0.7}
