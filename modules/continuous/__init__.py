"""Continuous training: what a Trainer carries from one span's model to the next."""
