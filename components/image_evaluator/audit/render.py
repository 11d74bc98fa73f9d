"""The audit's pictures: thumbnails of suspects, saliency overlays; PNG files."""
import io

import numpy as np
from PIL import Image

from core.storage import files

THUMBNAIL = 96  # px, the longer side of a suspect's thumbnail
OVERLAY = 160  # px, at least, for a saliency overlay: 28 px maps are unreadable
_HEAT_ALPHA = 0.5


def _rgb(pixels: np.ndarray) -> np.ndarray:
    """[S, S, 1 or 3] float pixels in [0, 255] -> [S, S, 3] uint8."""
    image = np.clip(np.round(pixels), 0, 255).astype(np.uint8)
    return np.repeat(image, 3, axis=-1) if image.shape[-1] == 1 else image


def _resized(image: np.ndarray, side: int) -> np.ndarray:
    """Nearest-neighbour when enlarging (pixels stay sharp), area-like when shrinking."""
    method = Image.NEAREST if side >= image.shape[0] else Image.BILINEAR
    return np.asarray(Image.fromarray(image).resize((side, side), method))


def thumbnail(pixels: np.ndarray) -> np.ndarray:
    """A THUMBNAIL px RGB picture of one image."""
    return _resized(_rgb(pixels), THUMBNAIL)


def heat_colors(heat: np.ndarray) -> np.ndarray:
    """[S, S] values in [0, 1] -> [S, S, 3] uint8: blue (0) to red (1), through yellow."""
    heat = np.clip(heat, 0.0, 1.0)[..., None]
    red = np.clip(2 * heat, 0, 1)
    green = np.clip(2 - np.abs(4 * heat - 2), 0, 1)
    blue = np.clip(1 - 2 * heat, 0, 1)
    return np.round(255 * np.concatenate([red, green, blue], axis=-1)).astype(np.uint8)


def overlay(pixels: np.ndarray, heat: np.ndarray) -> np.ndarray:
    """The image with its [S, S] map in [0, 1] blended over it, at least OVERLAY px."""
    blended = (1 - _HEAT_ALPHA) * _rgb(pixels) + _HEAT_ALPHA * heat_colors(heat)
    image = np.round(blended).astype(np.uint8)
    return _resized(image, max(OVERLAY, image.shape[0]))


def write_png(image: np.ndarray, path: str) -> None:
    """An [H, W, 3] uint8 picture to a PNG file (local path or gs://)."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    files.write_bytes(path, buffer.getvalue())
