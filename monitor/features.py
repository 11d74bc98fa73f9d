"""The image features the monitor compares with training: measured as ingestion measures them.

Ingestion (components/image_example_gen/encoding/encode.py) decodes each image
with `decode_scaled`, which reads every byte (a corrupt file fails as in a full
decode), and stores the mean luminance and grayscale of `pixel_measures` with the
full height and width; StatisticsGen profiles those features. The monitor takes
the same numbers from the same functions, so a drift is the data's, not a
difference in how it was measured.
"""
import dataclasses
from typing import Dict

from PIL import Image

from core.contract import BRIGHTNESS_KEY, COLOR_SLICE_KEY, HEIGHT_KEY, WIDTH_KEY
from components.image_example_gen.data_health.slices import slice_features
from components.image_example_gen.encoding.encode import decode_scaled, pixel_measures


@dataclasses.dataclass
class ImageFeatures:
    """One image's measures; `image` is the decoded (possibly scaled) picture."""

    brightness: float  # mean luminance 0..255
    height: int
    width: int
    grayscale: int  # 1 or 0
    image: Image.Image

    def example_features(self) -> Dict[str, object]:
        """The features under the names (and values) ingested examples carry them."""
        color = slice_features(self.height, self.width, self.grayscale)[COLOR_SLICE_KEY]
        return {BRIGHTNESS_KEY: self.brightness, HEIGHT_KEY: self.height,
                WIDTH_KEY: self.width, COLOR_SLICE_KEY: color.decode()}


def measure_image(data: bytes, max_pixels: int) -> ImageFeatures:
    """The features of one encoded image; raises BadImageError if it cannot be decoded."""
    image, (width, height) = decode_scaled(data, max_pixels)
    luminance, grayscale = pixel_measures(image)
    return ImageFeatures(luminance, height, width, grayscale, image)
