"""The Evaluator's model audit: label errors, saliency, robustness, leakage, slices, gates."""
