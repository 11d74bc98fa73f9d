#!/usr/bin/env bash
# Install if needed, then run the whole test suite (end-to-end tests included).
#
#   bash scripts/test.sh                  # everything (run time: docs/testing.md)
#   bash scripts/test.sh -m "not slow"    # skip the end-to-end runs; any pytest args
#   IMAGEPIPE_TEST_WORKERS=0 bash scripts/test.sh   # in one process (default: 2 workers);
#                                                   # --pdb and live -s output need it
#
# Two pytest-xdist workers, each taking whole files (--dist loadfile, so a
# file's shared runs happen once): the end-to-end tests spend much of their
# time starting processes and waiting on I/O, which the other worker overlaps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The report's layout test renders it in headless Chromium (tests/report/
# test_report_in_browser.py skips without it). As root, e.g. in CI, Debian's package
# is added when missing: about 20 s and 460 MB.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test: adding Chromium (apt-get) for the report's browser test"
  apt-get install -y -q chromium >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null; } \
    || echo "test: warning: apt-get could not install chromium; the browser test will skip"
fi
# The monitor's Prometheus tests (the push, the alert rules, tests/e2e/test_monitor.py) run
# Debian's promtool, Pushgateway and Prometheus, and skip without them. As root they are added when missing: about 10 s from a warm apt
# cache, 23 MB to download and 107 MB installed. The tests start their own servers on free
# ports (a container's policy-rc.d keeps the packages' services from starting).
if { [ ! -x /usr/bin/promtool ] || [ ! -x /usr/bin/prometheus-pushgateway ]; } \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test: adding Prometheus and its Pushgateway (apt-get) for the monitoring tests"
  monitoring_packages="prometheus prometheus-pushgateway"
  apt-get install -y -q --no-install-recommends $monitoring_packages >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 \
         && apt-get install -y -q --no-install-recommends $monitoring_packages >/dev/null; } \
    || echo "test: warning: apt-get could not install prometheus; its tests will skip"
fi
exec .venv/bin/python -m pytest -n "${IMAGEPIPE_TEST_WORKERS:-2}" --dist loadfile "$@"
