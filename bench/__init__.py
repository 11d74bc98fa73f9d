"""Benchmarks: each prints a table of ratios against a baseline run in the same session
and writes bench/results/<name>.json with machine info."""
