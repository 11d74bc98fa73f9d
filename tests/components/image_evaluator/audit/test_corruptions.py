"""Corruptions: each severity moves the pixels further, inside [0, 255], shape kept."""
import subprocess
import sys

import numpy as np
import pytest

from components.image_evaluator.audit.corruptions import (CORRUPTIONS, SEVERITIES, blur_sigma,
                                                gaussian_blur)
from tests.support.paths import REPO


def _images(channels):
    """Smooth images with detail, mid-range so no corruption saturates at once."""
    rng = np.random.default_rng(0)
    coarse = rng.uniform(60, 190, (3, 4, 4, channels))
    return np.repeat(np.repeat(coarse, 4, axis=1), 4, axis=2).astype(np.float32) + \
        rng.uniform(-20, 20, (3, 16, 16, channels)).astype(np.float32)


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_each_severity_changes_the_pixels_more(name, channels):
    images = _images(channels)
    changes = []
    for severity in SEVERITIES:
        corrupted = CORRUPTIONS[name](images, severity)
        assert corrupted.shape == images.shape and corrupted.dtype == np.float32
        assert corrupted.min() >= 0.0 and corrupted.max() <= 255.0
        changes.append(float(np.abs(corrupted - images).mean()))
    assert 0.0 < changes[0] < changes[1] < changes[2], changes


def test_the_noise_is_the_same_in_every_run():
    images = _images(1)
    first, again = (CORRUPTIONS["gaussian_noise"](images, 2) for _ in range(2))
    np.testing.assert_array_equal(first, again)


def test_the_blur_scales_with_the_image_but_stays_visible_on_small_ones():
    assert blur_sigma(224, 2) == 2.0 and blur_sigma(448, 1) == 2.0
    assert blur_sigma(28, 1) == 0.5 and blur_sigma(28, 3) == 1.5


def test_the_blur_equals_a_separable_filter_done_by_hand():
    images = _images(3)
    blurred = gaussian_blur(images, 2)
    sigma = blur_sigma(16, 2)
    radius = int(np.ceil(3 * sigma))
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps /= taps.sum()
    padded = np.pad(images, [(0, 0), (radius, radius), (radius, radius), (0, 0)], "reflect")
    rows = sum(t * padded[:, i:i + 16] for i, t in enumerate(taps))
    want = sum(t * rows[:, :, i:i + 16] for i, t in enumerate(taps))
    np.testing.assert_allclose(blurred, want, atol=1e-3)


@pytest.mark.integration
def test_the_blur_runs_at_every_planned_image_side():
    """In a child: a native crash (oneDNN's 1 x W depthwise filter) must fail this test,
    not kill pytest."""
    code = ("import numpy as np; "
            "from components.image_evaluator.audit.corruptions import gaussian_blur;"
            "[gaussian_blur(np.full((2, s, s, 3), 128, np.float32), 3)"
            " for s in (128, 160, 192, 224, 331)]")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
