"""Small random image files, for tests that need real files in a given size, mode and format."""
import pathlib
import shutil

import numpy as np
from PIL import Image


def write_image(path: pathlib.Path, size=(8, 8), mode="RGB", fmt=None, seed=0) -> pathlib.Path:
    """Writes a small random image; the format follows the extension unless given."""
    rng = np.random.default_rng(seed)
    bands = len(Image.new(mode, (1, 1)).getbands())
    pixels = rng.integers(0, 256, (size[1], size[0], bands), dtype=np.uint8)
    image = Image.fromarray(pixels.squeeze(-1) if bands == 1 else pixels,
                            "L" if bands == 1 else ("RGBA" if bands == 4 else "RGB"))
    if image.mode != mode:
        image = image.convert(mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format=fmt)
    return path


def copy_images(paths, folder: pathlib.Path) -> pathlib.Path:
    """`folder` (created) holding copies of the image files `paths`, under their names."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in paths:
        shutil.copy(path, folder / pathlib.Path(path).name)
    return folder
