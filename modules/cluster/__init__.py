"""Training on several workers: TF_CONFIG, and local worker processes that stand in for a cluster."""
