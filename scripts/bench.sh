#!/usr/bin/env bash
# Install if needed, then run one benchmark from bench/ (default: all of them).
#
#   bash scripts/bench.sh ingest              # bench/ingest.py; see its docstring
#   bash scripts/bench.sh ingest --sizes 2000 # extra args go to the benchmark
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1
names=("${1:-ingest}")
shift $(( $# > 0 ? 1 : 0 ))
for name in "${names[@]}"; do
  .venv/bin/python -W ignore -m "bench.$name" "$@"
done
