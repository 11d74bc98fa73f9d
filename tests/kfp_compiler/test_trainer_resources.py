"""The compiled Trainer's memory: the flag's size, a Vertex machine type's, or the default."""
import pytest

from core.errors import UsageError
from kfp_compiler.trainer_resources import (kubernetes_quantity, machine_memory,
                                            parse_memory, trainer_memory)
from pipeline.planning import rules


@pytest.mark.parametrize("text, size", [("16G", 16 << 30), ("16Gi", 16 << 30),
                                        ("512M", 512 << 20), ("1.5T", 3 << 39),
                                        ("2gib", 2 << 30)])
def test_sizes_parse_in_binary_units(text, size):
    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["", "lots", "0G", "-1G", "16X", "16", "100M"])
def test_a_bad_size_names_the_flag(text):
    with pytest.raises(UsageError, match="--trainer-memory"):
        parse_memory(text)


@pytest.mark.parametrize("machine, gib", [("n1-standard-8", 30), ("n1-highmem-4", 26),
                                          ("e2-highcpu-16", 16), ("a2-highgpu-2g", 170),
                                          ("a2-ultragpu-1g", 170)])
def test_known_machine_types(machine, gib):
    assert machine_memory(machine) == gib << 30


def test_unknown_machine_types_give_none():
    assert machine_memory("ct5lp-hightpu-4t") is None and machine_memory("custom-8") is None
    assert machine_memory("a2-highgpu-g") is None


def test_the_flag_wins_then_the_vertex_machine_then_the_default():
    assert trainer_memory("4G", "vertex", "n1-standard-8", True) == 4 << 30
    assert trainer_memory(None, "vertex", "n1-standard-8", True) == 30 << 30
    assert trainer_memory(None, "vertex", "n1-standard-8", False) == rules.COMPILED_TRAINER_MEMORY
    assert trainer_memory(None, "kubeflow", "n1-standard-8", False) == \
        rules.COMPILED_TRAINER_MEMORY


def test_kubernetes_quantities():
    assert kubernetes_quantity(32 << 30) == "32Gi" and kubernetes_quantity(1536 << 20) == "1536Mi"
