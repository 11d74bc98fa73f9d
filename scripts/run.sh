#!/usr/bin/env bash
# Install if needed, then run the whole pipeline on the bundled digits.
#
#   bash scripts/run.sh                    # data/mnist_1k/png -> outputs/
#   bash scripts/run.sh --data DIR --output OUT   # any `imagepipe run` flags
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/imagepipe run "$@"
