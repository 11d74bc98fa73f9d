"""select_strategy: TPU through its resolver, mirrored over several devices, else default."""
import numpy as np
import pytest
import tensorflow as tf

from modules import distribution as strategy_module
from modules.networks.keras_model import compile_model
from modules.networks.small import build_cnn
from modules.distribution import select_strategy

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


class _FakeTPU:
    """Stands in for TPUClusterResolver, the cluster calls and TPUStrategy; records calls."""

    def __init__(self, monkeypatch, cores=8):
        self.calls = []
        monkeypatch.setattr(tf.config, "experimental_connect_to_cluster",
                            lambda r: self.calls.append(("connect", r)))
        monkeypatch.setattr(tf.tpu.experimental, "initialize_tpu_system",
                            lambda r: self.calls.append(("initialize", r)))
        fake = self

        class Strategy:
            num_replicas_in_sync = cores

            def __init__(self, resolver):
                fake.calls.append(("strategy", resolver))

        monkeypatch.setattr(tf.distribute, "TPUStrategy", Strategy)

    def resolver(self, tpu):
        self.calls.append(("resolve", tpu))
        return f"resolver({tpu})"


def test_tpu_address_connects_initializes_then_builds_tpu_strategy(monkeypatch):
    fake = _FakeTPU(monkeypatch)
    plan = select_strategy("grpc://10.0.0.2:8470", 16, resolver_factory=fake.resolver)
    assert fake.calls == [("resolve", "grpc://10.0.0.2:8470"),
                          ("connect", "resolver(grpc://10.0.0.2:8470)"),
                          ("initialize", "resolver(grpc://10.0.0.2:8470)"),
                          ("strategy", "resolver(grpc://10.0.0.2:8470)")]
    assert (plan.kind, plan.global_batch, plan.policy) == ("tpu", 128, "mixed_bfloat16")
    assert tf.config.get_soft_device_placement()


def test_local_tpu_vm_needs_no_remote_connection(monkeypatch):
    fake = _FakeTPU(monkeypatch, cores=4)
    plan = select_strategy("local", 8, resolver_factory=fake.resolver)
    assert [c[0] for c in fake.calls] == ["resolve", "initialize", "strategy"]
    assert fake.calls[0] == ("resolve", "local")
    assert plan.global_batch == 32


def test_the_real_resolver_takes_local_without_any_cloud_api():
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
    assert resolver.master() == "" and resolver.cluster_spec().as_dict() == {}


def test_tpu_batch_must_be_a_multiple_of_8(monkeypatch):
    fake = _FakeTPU(monkeypatch)
    with pytest.raises(ValueError, match="--batch-size 12: .* multiple of 8"):
        select_strategy("local", 12, resolver_factory=fake.resolver)
    assert fake.calls == []


def test_one_device_gets_the_default_strategy_in_float32():
    plan = select_strategy(None, 64, gpus=[])
    assert plan.strategy is tf.distribute.get_strategy()
    assert (plan.kind, plan.replicas, plan.global_batch, plan.policy) == ("cpu", 1, 64, "float32")


def test_several_gpus_are_mirrored_in_mixed_float16(monkeypatch):
    monkeypatch.setattr(tf.distribute, "MirroredStrategy",
                        lambda devices: type("M", (), {"num_replicas_in_sync": len(devices)})())
    plan = select_strategy(None, 32, gpus=["/gpu:0", "/gpu:1"])
    assert (plan.kind, plan.global_batch, plan.policy) == ("gpu", 64, "mixed_float16")
    assert select_strategy(None, 32, gpus=["/gpu:0", "/gpu:1"],
                           mixed_precision=False).policy == "float32"


def test_model_trains_mirrored_over_two_logical_cpus():
    cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
    assert len(cpus) >= 2, "tests/conftest.py splits the CPU into two logical devices"
    plan = select_strategy(None, 8, gpus=cpus[:2])
    assert isinstance(plan.strategy, tf.distribute.MirroredStrategy)
    assert (plan.replicas, plan.global_batch) == (2, 16)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 8, 8, 1)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 0).astype("int64")
    x[y == 1] += 1.0
    data = tf.data.Dataset.from_tensor_slices((x, np.eye(2)[y])).batch(plan.global_batch,
                                                            drop_remainder=True)
    with plan.strategy.scope():
        model = compile_model(build_cnn((8, 8, 1), 2), "adam", 1e-3, steps_per_execution=2)
    history = model.fit(data, epochs=10, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    assert strategy_module.POLICIES["cpu"] == "float32"
