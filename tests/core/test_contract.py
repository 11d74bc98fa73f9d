"""The data contract: split paths, readers, and that it stays light."""
import subprocess
import sys

from core import contract


def test_split_paths_match_tfx_get_split_uri(tmp_path):
    from tfx.types import artifact_utils, standard_artifacts
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = str(tmp_path), '["train", "eval"]'
    assert contract.split_dir(str(tmp_path), "train") == artifact_utils.get_split_uri(
        [examples], "train")
    pattern = contract.split_dir(str(tmp_path), "eval") + "/*"
    assert (contract.split_of(pattern), contract.examples_uri_of(pattern)) == (
        "eval", str(tmp_path))


def test_labels_and_split_sizes_are_read_beside_the_splits(tmp_path):
    (tmp_path / contract.LABELS_FILE).write_text("cat\ndog\némeu\n", encoding="utf-8")
    assert contract.read_labels(str(tmp_path / contract.LABELS_FILE)) == ["cat", "dog", "émeu"]
    assert contract.split_size(str(tmp_path), "train") == 0  # no report: another ExampleGen
    (tmp_path / contract.INGEST_REPORT_FILE).write_text('{"splits": {"train": 797, "eval": 203}}')
    assert (contract.split_size(str(tmp_path), "train"),
            contract.split_size(str(tmp_path), "eval")) == (797, 203)


def test_importing_the_contract_loads_nothing_heavy():
    code = ("import sys, core.contract; "
            "print(sorted(m for m in ('tensorflow', 'apache_beam', 'tfx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
