"""TF_CONFIG is checked before TensorFlow sees it: each bad one is named, a good one read."""
import json

import pytest

from modules.cluster import tf_config
from modules.cluster.tf_config import ClusterConfigError, is_chief, read_cluster, training_tasks

WORKERS = {"worker": ["127.0.0.1:2001", "127.0.0.1:2002"]}


def _env(config) -> dict:
    return {"TF_CONFIG": config if isinstance(config, str) else json.dumps(config)}


def test_unset_or_a_single_task_is_no_cluster():
    assert read_cluster({}) is None
    assert read_cluster(_env({"cluster": {"worker": ["h:1"]},
                              "task": {"type": "worker", "index": 0}})) is None


def test_several_workers_are_a_cluster_whose_worker_0_is_chief():
    config = read_cluster(_env({"cluster": WORKERS, "task": {"type": "worker", "index": 1}}))
    assert training_tasks(config) == 2 and not is_chief(config)
    config["task"]["index"] = 0
    assert is_chief(config)
    with_chief = {"cluster": {**WORKERS, "chief": ["h:3"]}, "task": {"type": "chief"}}
    assert is_chief(read_cluster(_env(with_chief))) and training_tasks(with_chief) == 3


@pytest.mark.parametrize("config, words", [
    ("not json", "not JSON"),
    ({"cluster": {"worker": "h:1"}, "task": {"type": "worker"}}, "host:port"),
    ({"cluster": {"boss": ["h:1", "h:2"]}, "task": {"type": "boss"}}, "unknown job"),
    ({"cluster": WORKERS}, '"task" must name a job'),
    ({"cluster": WORKERS, "task": {"type": "chief"}}, '"task" must name a job'),
    ({"cluster": WORKERS, "task": {"type": "worker", "index": 2}}, "index 2"),
    ({"cluster": {**WORKERS, "ps": ["h:9"]}, "task": {"type": "worker"}}, "needs a chief"),
    ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief"}}, "one chief"),
    ({"cluster": {"evaluator": ["h:1"]}, "task": {"type": "evaluator"}}, "no chief and no worker"),
])
def test_a_bad_tf_config_is_named(config, words):
    with pytest.raises(ClusterConfigError, match=words):
        read_cluster(_env(config))


def test_a_parameter_server_cluster_trains_on_its_workers_and_the_chief_coordinates():
    config = {"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]},
              "task": {"type": "ps", "index": 0}}
    checked = tf_config.read_cluster(_env(config))
    assert tf_config.has_parameter_servers(checked) and tf_config.serves(checked)
    assert tf_config.training_tasks(checked) == 2 and not tf_config.is_chief(checked)
    chief = {**config, "task": {"type": "chief", "index": 0}}
    assert tf_config.is_chief(chief) and not tf_config.serves(chief)


@pytest.mark.parametrize("cluster, task, index", [
    ({"worker": ["h:1", "h:2"]}, {"type": "worker", "index": 1}, 1),
    ({"chief": ["h:0"], "worker": ["h:1", "h:2"]}, {"type": "chief", "index": 0}, 0),
    ({"chief": ["h:0"], "worker": ["h:1", "h:2"]}, {"type": "worker", "index": 1}, 2),
    ({"chief": ["h:0"], "worker": ["h:1"], "ps": ["h:2"]}, {"type": "worker", "index": 0}, 0),
])
def test_training_index_puts_the_chief_first(cluster, task, index):
    assert tf_config.training_index({"cluster": cluster, "task": task}) == index
