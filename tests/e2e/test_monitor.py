"""`imagepipe monitor` end to end: a model, two windows, real Pushgateway and Prometheus.

The model is trained on four fifths of the bundled digits; the window is the other fifth
(held-out traffic that looks like training), then the same images inverted, which drift
on brightness. Prometheus loads the shipped rules (kubeflow/alert_rules/alerts.rules.yml)
and must fire the input-drift alert on what the monitor pushed.
"""
import datetime
import json
import os
import pathlib
import time
import urllib.parse

import numpy as np
import pytest
from PIL import Image

from tests.support.cli import failure, imagepipe
from tests.support.paths import ALERT_RULES, MNIST_PNG
from tests.support.prometheus_servers import prometheus, pushgateway
from tests.support.servers import get

pytestmark = pytest.mark.slow
RULES = ALERT_RULES / "alerts.rules.yml"
WINDOW_EVERY = 5  # every fifth digit of each class is traffic, never trained on
EXIT_HEALTHY, EXIT_ALERTING = 0, 3
ALERT_WAIT_S = 30  # a 1 s scrape and evaluation interval: seconds, in practice


def _split_digits(train: pathlib.Path, clean: pathlib.Path, inverted: pathlib.Path) -> None:
    """Training tree by class; both windows flat, as production traffic comes."""
    for label in sorted(os.listdir(MNIST_PNG)):
        (train / label).mkdir(parents=True)
        for index, name in enumerate(sorted(os.listdir(MNIST_PNG / label))):
            pixels = np.asarray(Image.open(MNIST_PNG / label / name))
            if index % WINDOW_EVERY:
                Image.fromarray(pixels).save(train / label / name)
            else:
                Image.fromarray(pixels).save(clean / f"{label}_{name}")
                Image.fromarray(255 - pixels).save(inverted / f"{label}_{name}")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(output folder with a pushed model, clean window, inverted window)."""
    root = tmp_path_factory.mktemp("e2e_monitor")
    train, clean, inverted = root / "train", root / "clean", root / "inverted"
    clean.mkdir()
    inverted.mkdir()
    _split_digits(train, clean, inverted)
    # 60 steps reach about 0.87 eval accuracy in 40 s; --accuracy-threshold 0 blesses it.
    imagepipe("run", "--data", train, "--output", root / "out", "--train-steps", 60,
              "--eval-steps", 4, "--accuracy-threshold", 0, "--quantize", "none",
              "--tensorboard-update-freq", 10, timeout=600, check=True)
    return root / "out", clean, inverted


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(Pushgateway URL, Prometheus URL); both stopped at the end, whatever happens.

    The tests ask for it before the model, so a missing binary skips before training.
    """
    folder = tmp_path_factory.mktemp("prometheus")
    with pushgateway(folder) as gateway, prometheus(folder, gateway, RULES) as server:
        yield gateway, server


def _monitor(model, window, gateway, json_path) -> tuple:
    """(exit code, monitor.json) of `imagepipe monitor` on one window."""
    out, *_ = model
    result = imagepipe("monitor", "--output", out, "--data", window, "--pushgateway", gateway,
                       "--json", json_path, timeout=300)
    assert json_path.exists(), failure(result)
    return result.returncode, json.loads(json_path.read_text()), result


def _api(server: str, path: str, **params) -> list:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    answer = json.loads(get(f"{server}/api/v1/{path}{query}"))
    assert answer["status"] == "success", answer
    return answer["data"]["alerts"] if path == "alerts" else answer["data"]["result"]


def _scraped_success(server: str, result: dict) -> dict:
    """Waits until Prometheus has scraped this result's push; returns its sample."""
    pushed = datetime.datetime.fromisoformat(result["time"]).timestamp()
    deadline = time.monotonic() + ALERT_WAIT_S
    while time.monotonic() < deadline:
        for sample in _api(server, "query",
                           query="imagepipe_monitor_last_success_timestamp_seconds"):
            if float(sample["value"][1]) == pushed:
                return sample
        time.sleep(0.5)
    raise AssertionError(f"Prometheus never scraped the push of {result['time']}")


def _firing(server: str, name: str) -> list:
    return [a for a in _api(server, "alerts")
            if a["labels"]["alertname"] == name and a["state"] == "firing"]


def test_a_clean_window_is_healthy_and_prometheus_raises_nothing(servers, model, tmp_path):
    gateway, server = servers
    code, result, run = _monitor(model, model[1], gateway, tmp_path / "clean.json")
    assert code == EXIT_HEALTHY, json.dumps(result["measures"]) + run.stderr[-2000:]
    assert result["alerts"] == [] and result["healthy"]
    assert result["window"]["records"] == result["window"]["scored"] > 150
    sample = _scraped_success(server, result)
    assert sample["metric"]["model"] == result["model"]
    assert sample["metric"]["version"] == str(result["version"])
    time.sleep(3)  # three evaluations of the rules on the scraped push
    assert _api(server, "alerts") == []


def test_an_inverted_window_alerts_and_prometheus_fires_input_drift(servers, model, tmp_path):
    gateway, server = servers
    code, result, run = _monitor(model, model[2], gateway, tmp_path / "inverted.json")
    assert code == EXIT_ALERTING, run.stdout[-2000:] + run.stderr[-2000:]
    drifted = [a for a in result["alerts"] if a["kind"] == "input_drift"]
    assert [a["measure"] for a in drifted] == ["brightness"], result["alerts"]
    assert not result["healthy"]
    _scraped_success(server, result)
    deadline = time.monotonic() + ALERT_WAIT_S
    while not (firing := _firing(server, "ImagepipeInputDrift")):
        assert time.monotonic() < deadline, _api(server, "alerts")
        time.sleep(0.5)
    print("firing:", json.dumps(firing, indent=1))  # shown with -s
    assert firing[0]["labels"]["feature"] == "brightness"
    assert firing[0]["labels"]["version"] == str(result["version"])
    assert float(firing[0]["value"]) == drifted[0]["value"]
