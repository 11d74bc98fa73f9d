"""Training on several workers: TF_CONFIG, and local worker processes standing in for a cluster."""
