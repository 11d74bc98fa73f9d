"""Baseline resolution for the Evaluator: the latest blessed model other than the candidate."""
