"""Generated RGB photos of mixed sizes, two classes by colour, for the photo end-to-end tests."""
import pathlib

import numpy as np
from PIL import Image

# (width, height): a camera file, HD, VGA both ways, a thumbnail; VGA is the most common.
SIZES = ((2000, 1500), (1280, 720), (640, 480), (480, 640), (640, 480), (96, 72))


def make_photos(root: pathlib.Path, count: int = 36, seed: int = 0, detail=(6, 8),
                boost: int = 55, grain: float = 0.0, quality: int = 85) -> pathlib.Path:
    """Class `warm` is reddish and `cool` bluish (`boost` added to one channel of a coarse
    `detail` grid of random colours, smoothly enlarged to each size), with `grain`, a
    sensor's fine noise (what a bilinear shrink aliases and Transform's does not)."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        name = ("warm", "cool")[i % 2]
        (root / name).mkdir(parents=True, exist_ok=True)
        coarse = rng.integers(0, 255 - boost, (*detail, 3)).astype(np.int16)
        coarse[..., 0 if name == "warm" else 2] += boost
        size = SIZES[(i // 2) % len(SIZES)]
        image = Image.fromarray(coarse.astype(np.uint8)).resize(size, Image.BILINEAR)
        if grain:
            noise = rng.normal(0, grain, (size[1], size[0], 3))
            image = Image.fromarray(
                np.clip(np.asarray(image, np.float64) + noise, 0, 255).astype(np.uint8))
        image.save(root / name / f"{i:03d}.jpg", quality=quality)
    return root
