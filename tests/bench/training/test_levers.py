"""bench.training.levers: each lever trains the same model; ratios to float32."""
import pytest
import tf_keras as keras

from bench.training import levers

pytestmark = pytest.mark.integration


def test_each_lever_is_timed_against_float32(tmp_path, monkeypatch):
    # In this process rather than one per lever (bench.common.run_result_in_process, tested
    # with bench.ingestion.data_health_cost): a fresh process per lever imports TensorFlow again.
    monkeypatch.setattr("bench.common.RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(levers, "_measure", levers.throughput)
    try:
        result = levers.main(["--models", "cnn:16", "--levers", "mixed_bfloat16", "xla",
                              "--seconds", "0.2"])
    finally:
        keras.mixed_precision.set_global_policy("float32")
    rows = result["rows"]
    assert [r["lever"] for r in rows] == ["float32", "mixed_bfloat16", "xla"]
    assert rows[0]["ratio"] == 1.0 and all(r["examples_per_s"] > 0 for r in rows)
    assert rows[2]["ratio"] == pytest.approx(rows[2]["examples_per_s"] / rows[0]["examples_per_s"])
    assert (tmp_path / "levers.json").exists()
