"""kubeflow/alert_rules/alerts.rules.yml loads, and fires as alerts.test.yml expects (promtool)."""
import subprocess

import pytest

from tests.support.paths import ALERT_RULES
from tests.support.prometheus_servers import binary

pytestmark = pytest.mark.integration  # promtool started as a subprocess


def _promtool(*args) -> subprocess.CompletedProcess:
    return subprocess.run([binary("promtool"), *args], cwd=ALERT_RULES, capture_output=True,
                          text=True, timeout=60)


def test_the_rules_are_valid():
    result = _promtool("check", "rules", "alerts.rules.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 6 rules found" in result.stdout


def test_each_rule_fires_over_its_threshold_and_not_at_it():
    """The unit tests in alerts.test.yml: every rule under, at and over its line."""
    result = _promtool("test", "rules", "alerts.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
