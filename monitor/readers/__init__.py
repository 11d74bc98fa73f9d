"""Readers of a monitoring window: one module per input format (see registry.py)."""
