"""bench.ingestion.foreign_layouts, run small on the bundled digits' IDX files: every layout
ingests the same images per split as its folders, and the ratios are against them."""
import pytest

from bench import common
from bench.ingestion import foreign_layouts
from tests.support.paths import MNIST_IDX

pytestmark = pytest.mark.slow  # eight `imagepipe ingest` processes and listings: ~30 s


def test_each_layout_ingests_what_its_folders_do(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "RESULTS_DIR", str(tmp_path / "results"))
    found = foreign_layouts.main(["--fashion-mnist", str(MNIST_IDX),
                                  "--count", "700", "--repeat", "1",
                                  "--work", str(tmp_path / "work")])
    rows = {row["layout"]: row for row in found["rows"]}
    assert set(rows) == {"folders_a", "parquet", "folders_b", "import_csv"}
    assert all(row["same_counts"] for row in rows.values())
    assert rows["parquet"]["splits"] == rows["folders_a"]["splits"] == "train 600 eval 100"
    assert rows["parquet"]["format"] == "hf-parquet"
    assert rows["import_csv"]["format"] == "vertex-csv"
    assert rows["parquet"]["ingest_s_x"] == pytest.approx(
        rows["parquet"]["ingest_s"] / rows["folders_a"]["ingest_s"])
    assert (tmp_path / "results" / "foreign_layouts.json").exists()
    assert not (tmp_path / "work").exists()  # the data is removed without --keep
