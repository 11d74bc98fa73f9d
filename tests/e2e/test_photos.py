"""`imagepipe run` end to end on generated RGB photos of mixed sizes: the plan picks the photo
model."""
import pytest

from tests.support.cli import run_pipeline
from tests.support.generated_photos import make_photos

pytestmark = pytest.mark.slow


def test_mixed_size_photos_train_the_planned_photo_model(tmp_path):
    data, output = make_photos(tmp_path / "photos"), tmp_path / "out"
    summary, stdout = run_pipeline(data, output, "--epochs", "2", "--batch-size", "8",
                                   "--accuracy-threshold", "0")
    assert "plan      CPU; model photo: RGB images" in stdout
    plan = summary["plan"]
    # The most common side is 640: the CPU cap, not the largest image (2000).
    assert (plan["values"]["model"], plan["values"]["image_size"]) == ("photo", 128)
    assert (plan["values"]["channels"], plan["values"]["epochs"]) == (3, 2)
    assert plan["reasons"]["epochs"] == "given (--epochs)"
    assert plan["data"]["side_max"] == 2000 and plan["memory"]["total_bytes"] > 0
    shapes = summary["data"]["shapes"]
    assert shapes["width"] == {"min": 96, "median": 640, "max": 2000}
    assert shapes["distinct"] == 5 and len(shapes["most_common"]) == 5
    assert summary["training"]["epochs_run"] == 2
    assert summary["pushed"]["serving"] and summary["pushed"]["tflite"]
    # The decoded-image cache lives beside the Trainer's runs and is gone afterwards.
    trainer = output / "tfx" / "Trainer"
    assert trainer.is_dir() and not list(trainer.rglob(".decode_cache"))
