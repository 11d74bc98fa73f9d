"""Real Pushgateway and Prometheus servers on loopback ports, for the monitoring tests.

Debian's binaries (scripts/test.sh adds them as root); a test skips, saying so, where
they are missing. Every server is stopped when its `with` block ends, however it ends.
"""
import contextlib
import json
import shutil

import pytest

from core.loopback import free_ports
from tests.support.servers import serving

PACKAGES = "Debian's prometheus and prometheus-pushgateway packages (scripts/test.sh adds them)"


def binary(name: str) -> str:
    """The path of a Prometheus tool on PATH, or a skip naming the missing packages."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed: it comes with {PACKAGES}")
    return path


@contextlib.contextmanager
def pushgateway(folder):
    """Yields the URL of a Pushgateway that keeps its metrics in memory only.

    Debian's build persists to /var/lib/prometheus/pushgateway.data by default, which
    would share metrics between test runs (and needs root): an empty file name turns it off.
    """
    port, = free_ports(1)
    command = [binary("prometheus-pushgateway"), f"--web.listen-address=127.0.0.1:{port}",
               "--persistence.file="]
    url = f"http://127.0.0.1:{port}"
    with serving(command, folder / "pushgateway.log", url + "/-/ready"):
        yield url


@contextlib.contextmanager
def prometheus(folder, pushgateway_url: str, rules):
    """Yields the URL of a Prometheus scraping `pushgateway_url` and evaluating `rules`.

    Every second, both: the tests wait for an alert in seconds, not minutes.
    honor_labels keeps the pushed job, model and version labels, as the Pushgateway's
    docs require.
    """
    port, = free_ports(1)
    config = folder / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [{"job_name": "pushgateway", "honor_labels": True,
                            "static_configs": [{"targets": [pushgateway_url.split("//")[1]]}]}],
    }))
    command = [binary("prometheus"), f"--config.file={config}",
               f"--storage.tsdb.path={folder / 'tsdb'}",
               f"--web.listen-address=127.0.0.1:{port}"]
    url = f"http://127.0.0.1:{port}"
    with serving(command, folder / "prometheus.log", url + "/-/ready"):
        yield url

