#!/usr/bin/env bash
# Install if needed, then run the whole test suite (end-to-end tests included).
#
#   bash scripts/test.sh                  # everything (run time: docs/testing.md)
#   bash scripts/test.sh -m "not slow"    # skip the end-to-end runs; any pytest args
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/python -m pytest "$@"
