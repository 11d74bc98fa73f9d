"""The gallery's titles, measured with matplotlib's renderer: none runs into another or a tile."""
import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest

from report import charts

NAMES = ["sunflowers", "dandelion", "Pembroke Welsh corgi (Canis familiaris)", "tulips",
         "roses", "a_class_with_an_exceptionally_long_folder_name_from_a_scraper"]
COLUMNS = 8


def _intersect(a, b) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0


@pytest.mark.parametrize("side", [28, 224])  # MNIST-sized and photo-sized tiles
def test_gallery_titles_fit_their_tiles_for_long_class_names(side):
    images = list(np.zeros((32, side, side, 3), np.uint8))
    actual = [NAMES[i % len(NAMES)] for i in range(32)]
    predicted = [NAMES[(i + 2) % len(NAMES)] if i % 2 else a for i, a in enumerate(actual)]
    fig = charts.gallery_figure(images, actual, predicted, COLUMNS)
    try:
        fig.canvas.draw()
        ax, renderer = fig.axes[0], fig.canvas.get_renderer()
        titles = ax.texts
        boxes = [t.get_window_extent(renderer) for t in titles]
        assert len(boxes) == 32
        for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2):
            assert not _intersect(a, b), (titles[i].get_text(), titles[j].get_text())
        band = charts.math.ceil(charts.TITLE_BAND_IN / (charts.GALLERY_TILE_IN / side))
        for i, box in enumerate(boxes):
            left, top = charts._cell(i // COLUMNS, i % COLUMNS, (side, side), band)
            (x0, tile_top), (x1, _) = ax.transData.transform([(left, top + band),
                                                              (left + side, top)])
            assert x0 - 1 <= box.x0 and box.x1 <= x1 + 1, titles[i].get_text()  # its column
            assert box.y0 >= tile_top - 1, titles[i].get_text()  # above its image
            assert box.y1 <= fig.bbox.height  # inside the picture
        wrong = [t.get_text() for t in titles if "\n" in t.get_text()]
        assert len(wrong) == 16 and all("→ " in text for text in wrong)
    finally:
        plt.close(fig)
