"""ImageEvaluator: TFX's Evaluator, which also accepts an empty baseline (Kubeflow target)."""

# What other stages may import: the explanation signature's names (the Trainer exports it).
PUBLIC_MODULES = ("audit.signature",)
