"""Benchmarks: each prints a table of ratios against a baseline measured in the same run
and writes bench/results/<name>.json with machine info."""
