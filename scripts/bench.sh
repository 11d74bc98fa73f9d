#!/usr/bin/env bash
# Install if needed, then run a benchmark from bench/ (default: the suite, bench/suite.py).
#
#   bash scripts/bench.sh                     # the performance suite: e2e, training, scaling, gpu
#   bash scripts/bench.sh suite --quick       # the same at tiny sizes (~2.5 min)
#   bash scripts/bench.sh ingest              # bench/ingest.py; see its docstring
#   bash scripts/bench.sh ingest --sizes 2000 # extra args go to the benchmark
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1
names=("${1:-suite}")
shift $(( $# > 0 ? 1 : 0 ))
for name in "${names[@]}"; do
  .venv/bin/python -W ignore -m "bench.$name" "$@"
done
