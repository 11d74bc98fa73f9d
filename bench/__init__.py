"""Benchmarks: each prints a table of ratios against a baseline measured in the same run
and writes bench/results/<name>.json with machine info.

Grouped by stage: pipeline_runs/, ingestion/, training/, serving/; suite.py runs the
performance suite and common.py is their shared plumbing. Run one with
`bash scripts/bench.sh GROUP/NAME` (`--help` lists them).
"""
