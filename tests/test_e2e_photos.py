"""`imagepipe run` end to end on generated RGB photos of mixed sizes: the plan picks the photo
model."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.slow

# (width, height): a camera file, HD, VGA both ways, a thumbnail; VGA is the most common.
SIZES = ((2000, 1500), (1280, 720), (640, 480), (480, 640), (640, 480), (96, 72))


def make_photos(root, count=36):
    """Class `warm` is reddish and `cool` bluish, with smooth photo-like texture."""
    rng = np.random.default_rng(0)
    for i in range(count):
        name = ("warm", "cool")[i % 2]
        (root / name).mkdir(parents=True, exist_ok=True)
        coarse = rng.integers(0, 200, (6, 8, 3)).astype(np.int16)
        coarse[..., 0 if name == "warm" else 2] += 55
        size = SIZES[(i // 2) % len(SIZES)]
        Image.fromarray(coarse.astype(np.uint8)).resize(size, Image.BILINEAR).save(
            root / name / f"{i:03d}.jpg", quality=85)
    return root


def test_mixed_size_photos_train_the_planned_photo_model(tmp_path):
    data, output = make_photos(tmp_path / "photos"), tmp_path / "out"
    script = os.path.join(os.path.dirname(sys.executable), "imagepipe")
    result = subprocess.run(
        [script, "run", "--data", str(data), "--output", str(output), "--epochs", "2",
         "--batch-size", "8", "--accuracy-threshold", "0"],
        capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "plan      CPU; model photo: RGB images" in result.stdout
    summary = json.loads((output / "summary.json").read_text())
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
