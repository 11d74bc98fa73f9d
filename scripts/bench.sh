#!/usr/bin/env bash
# Install if needed, then run one benchmark, bench/GROUP/NAME.py (default: bench/suite.py).
#
#   bash scripts/bench.sh                         # the suite: e2e, training, scaling, gpu
#   bash scripts/bench.sh suite --quick           # the same at tiny sizes (~2.5 min)
#   bash scripts/bench.sh ingestion/ingest_speed  # bench/ingestion/ingest_speed.py: its docstring
#   bash scripts/bench.sh ingestion/ingest_speed --sizes 2000  # extra args go to the benchmark
#   bash scripts/bench.sh --help                  # this, and every GROUP/NAME
set -euo pipefail
cd "$(dirname "$0")/.."

benchmarks() {  # every benchmark module as GROUP/NAME; common.py is their shared plumbing
  find bench -name '*.py' ! -name __init__.py ! -name common.py \
    | sed 's|^bench/||; s|\.py$||' | sort
}

name="${1:-suite}"
if [[ "$name" == -h || "$name" == --help ]]; then
  sed -n '2,/^set /{/^set /d; s/^# \{0,1\}//; p}' "$0"
  echo; echo "Benchmarks (GROUP/NAME):"; benchmarks | sed 's/^/  /'
  exit 0
fi
module="${name#bench/}"; module="${module%.py}"; module="${module//.//}"
if [[ ! -f "bench/$module.py" || "$module" == common || "$module" == */__init__ ]]; then
  echo "bench.sh: no benchmark bench/$module.py." >&2
  if [[ -d "bench/$module" ]]; then
    echo "bench.sh: bench/$module/ holds: $(benchmarks | grep "^$module/" | tr '\n' ' ')" >&2
  fi
  match="$(benchmarks | grep -x "[^/]*/$module" || true)"
  [[ -n "$match" ]] && echo "bench.sh: did you mean: bash scripts/bench.sh $match" >&2
  echo "bench.sh: 'bash scripts/bench.sh --help' lists every benchmark." >&2
  exit 2
fi
shift $(( $# > 0 ? 1 : 0 ))
bash scripts/install.sh
export TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1
exec .venv/bin/python -W ignore -m "bench.${module//\//.}" "$@"
