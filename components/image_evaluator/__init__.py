"""ImageEvaluator: TFX's Evaluator, which also accepts an empty baseline (Kubeflow target)."""
