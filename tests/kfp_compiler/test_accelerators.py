"""--accelerator parsing: what the Trainer's pod requests, and on which GKE nodes."""
import pytest

from kfp_compiler.accelerators import parse_accelerator
from core.errors import UsageError


def test_a_tpu_slice_requests_its_chips_on_nodes_of_its_type_and_topology():
    tpu = parse_accelerator("tpu:tpu-v5-lite-podslice:2x4")
    assert (tpu.resource, tpu.count) == ("google.com/tpu", 8)
    assert tpu.node_selector() == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                                   "cloud.google.com/gke-tpu-topology": "2x4"}
    assert parse_accelerator("tpu:tpu-v4-podslice:2x2x1").count == 4


def test_gpus_request_their_count_on_nodes_of_their_type():
    gpu = parse_accelerator("gpu:nvidia-tesla-t4:2")
    assert (gpu.resource, gpu.count, gpu.vertex_type()) == ("nvidia.com/gpu", 2,
                                                            "NVIDIA_TESLA_T4")
    assert gpu.node_selector() == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}


def test_a_multi_host_slice_is_refused():
    with pytest.raises(UsageError, match="16 chips span several TPU hosts"):
        parse_accelerator("tpu:tpu-v5-lite-podslice:4x4")


def test_none_means_cpu():
    assert parse_accelerator(None) is None and parse_accelerator("") is None


@pytest.mark.parametrize("text", ["tpu", "tpu:v5e", "fpga:x:1", "gpu:nvidia-tesla-t4:0",
                                  "gpu:nvidia-tesla-t4:two", "tpu:tpu-v5-lite-podslice:8",
                                  "tpu:tpu-v5-lite-podslice:0x2", "gpu:NVIDIA_T4:1"])
def test_malformed_values_are_refused_naming_the_flag(text):
    with pytest.raises(UsageError, match=f"--accelerator {text}: expected tpu:TYPE:TOPOLOGY"):
        parse_accelerator(text)
