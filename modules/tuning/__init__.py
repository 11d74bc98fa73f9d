"""Hyperparameter and architecture search: the Tuner's trials and what the Trainer applies."""
