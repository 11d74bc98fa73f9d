"""The report's pictures: plain functions from arrays and dicts to PNG files.

matplotlib with the Agg backend, so they render on machines without a
display (CI, containers, ssh sessions).
"""
import math
from typing import Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

WRONG, RIGHT = "#d62728", "#222222"
# Above this many classes the confusion chart is not drawn (summary.json still has
# the counts up to 1,000) and the per-class bars stop growing the figure.
MAX_CHART_CLASSES = 100
DPI = 80
# The gallery: tiles this wide on the page (8 columns: 1,024 px, inside a
# 1,400 px window), and a band above each for a two-line title.
GALLERY_TILE_IN = 1.6
TITLE_PT = 10
TITLE_BAND_IN = 0.4
SUPTITLE_IN = 0.35


def _save(fig, path: str, tight: bool = True) -> str:
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _visible(image: np.ndarray) -> np.ndarray:
    """RGB in 0..1, rescaled to its own min..max so normalized pixels are visible too."""
    image = image.astype(np.float32)
    low, high = float(image.min()), float(image.max())
    image = (image - low) / (high - low) if high > low else np.zeros_like(image)
    return np.repeat(image, 3, axis=-1) if image.shape[-1] == 1 else image[..., :3]


def _montage(grid: List[List[np.ndarray]], band: int = 0, pad: int = 2) -> np.ndarray:
    """One white RGB canvas with `grid`'s images in rows, `band` blank pixels above each.

    The report drew one matplotlib Axes per image (60 for the samples, 32 for
    the gallery): most of the time the five charts took, paid by every cold
    run. One image on one Axes draws far faster (measured: docs/performance.md).
    """
    grid = [[_visible(image) for image in row] for row in grid]
    height, width = _tile_shape(grid)
    height += band
    columns = max(1, max(len(row) for row in grid))
    canvas = np.ones((len(grid) * (height + pad) + pad, columns * (width + pad) + pad, 3),
                     np.float32)
    for r, row in enumerate(grid):
        for c, tile in enumerate(row):
            top, left = r * (height + pad) + pad + band, c * (width + pad) + pad
            canvas[top:top + tile.shape[0], left:left + tile.shape[1]] = tile
    return canvas


def _tile_shape(grid) -> tuple:
    """(height, width) that fits every image in `grid`; 1x1 for an empty grid."""
    images = [image for row in grid for image in row]
    return (max((i.shape[0] for i in images), default=1),
            max((i.shape[1] for i in images), default=1))


def _cell(r: int, c: int, shape, band: int, pad: int = 2):
    """Top-left corner of grid cell (r, c) in canvas pixels, as _montage lays it out."""
    return c * (shape[1] + pad) + pad, r * (shape[0] + band + pad) + pad


def gallery(images: Sequence[np.ndarray], actual: Sequence[str], predicted: Sequence[str],
            path: str, columns: int = 8) -> str:
    """Eval images titled with their class, and "→ predicted" under it in red when wrong."""
    return _save(gallery_figure(images, actual, predicted, columns), path, tight=False)


def gallery_figure(images: Sequence[np.ndarray], actual: Sequence[str],
                   predicted: Sequence[str], columns: int = 8):
    """The gallery's figure: tiles GALLERY_TILE_IN wide, each title fitted to its tile.

    The figure is sized from the montage, so a title band of two lines in
    points is a known number of image pixels, and titles are measured with the
    renderer and shrunk (then shortened) until they fit their tile: a long
    class name no longer runs over its neighbours'.
    """
    rows = max(1, math.ceil(len(images) / columns))
    shape = _tile_shape([images])
    scale = GALLERY_TILE_IN / shape[1]  # inches per image pixel
    band = math.ceil(TITLE_BAND_IN / scale)
    grid = [list(images[r * columns:(r + 1) * columns]) for r in range(rows)]
    canvas = _montage(grid, band)
    height = canvas.shape[0] * scale
    fig = plt.figure(figsize=(canvas.shape[1] * scale, height + SUPTITLE_IN), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, height / (height + SUPTITLE_IN)))
    ax.imshow(canvas, interpolation="nearest", aspect="auto")
    ax.axis("off")
    renderer = fig.canvas.get_renderer()
    for i, (truth, guess) in enumerate(zip(actual, predicted)):
        x, y = _cell(i // columns, i % columns, shape, band)
        title = ax.text(x + shape[1] / 2, y + band - 1, truth if truth == guess else
                        f"{truth}\n→ {guess}", ha="center", va="bottom", fontsize=TITLE_PT,
                        linespacing=1.15, color=RIGHT if truth == guess else WRONG)
        _fit(title, GALLERY_TILE_IN * DPI * 0.95, renderer)
    wrong = sum(a != p for a, p in zip(actual, predicted))
    fig.suptitle(f"actual class, and → predicted in red where wrong: {wrong} of {len(images)} "
                 "shown are wrong", fontsize=10)
    return fig


def _fit(text, width: float, renderer, smallest: float = 7.0) -> None:
    """Shrinks `text` to `width` display pixels: a smaller font first, then "…" per line."""
    while text.get_window_extent(renderer).width > width and text.get_fontsize() > smallest:
        text.set_fontsize(text.get_fontsize() - 0.5)
    fitted = []
    for line in text.get_text().split("\n"):  # each line on its own
        text.set_text(line)
        while text.get_window_extent(renderer).width > width and len(line) > 2:
            line = line[:-2] + "…"
            text.set_text(line)
        fitted.append(line)
    text.set_text("\n".join(fitted))


def confusion(counts: List[List[int]], classes: List[str], path: str) -> str:
    """Counts per (actual, predicted) class, with the numbers written in."""
    matrix = np.array(counts)
    size = max(4.0, 0.5 * len(classes) + 2)
    fig, ax = plt.subplots(figsize=(size, size))
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(classes)), classes, rotation=90)
    ax.set_yticks(range(len(classes)), classes)
    ax.set_xlabel("predicted")
    ax.set_ylabel("actual")
    if len(classes) <= 30:
        for (i, j), value in np.ndenumerate(matrix):
            if value:
                ax.text(j, i, str(value), ha="center", va="center", fontsize=8,
                        color="white" if value > matrix.max() / 2 else "black")
    ax.set_title("confusion matrix (eval split)")
    return _save(fig, path)


def per_class(accuracy: Dict[str, float], overall: float, path: str,
              intervals: Optional[Dict[str, Optional[dict]]] = None) -> str:
    """Accuracy of each class against the overall accuracy (classes without eval images: 0),
    each bar with its 95% interval where `intervals` ({name: {"interval"}}) gives one."""
    names = list(accuracy)
    values = [accuracy[n] if accuracy[n] is not None else 0.0 for n in names]
    bounds = [((intervals or {}).get(n) or {}).get("interval") or (v, v)
              for n, v in zip(names, values)]
    errors = [[max(0.0, v - low) for v, (low, _) in zip(values, bounds)],
              [max(0.0, high - v) for v, (_, high) in zip(values, bounds)]]
    fig, ax = plt.subplots(figsize=(min(max(5.0, 0.4 * len(names) + 2), 42.0), 3.5))
    ax.bar(range(len(names)), values, yerr=errors if intervals else None,
           error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#444"},
           color=[RIGHT if v >= overall else WRONG for v in values])
    ax.axhline(overall, color="#1f77b4", linestyle="--", label=f"overall {overall:.4f}")
    ax.set_xticks(range(len(names)), names, rotation=90 if len(names) > 12 else 0)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("eval accuracy")
    ax.legend(loc="lower right")
    ax.set_title("per-class accuracy (red: below overall"
                 + ("; bars: 95% CI)" if intervals else ")"))
    return _save(fig, path)


def curves(history: Dict[str, Dict[str, Dict[int, float]]], path: str,
           head_epochs: Optional[int] = None) -> str:
    """Loss and accuracy per epoch ({epoch: value}, from 1), train against validation,
    each point at its own epoch: validation may skip some.

    `head_epochs`: a two-phase fine-tuning's first phase; a line marks where
    the backbone's top blocks started training.
    """
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, metric in zip(axes, ("loss", "accuracy")):
        for split, style in (("train", "-o"), ("validation", "--s")):
            by_epoch = history.get(split, {}).get(metric, {})
            ax.plot(list(by_epoch), list(by_epoch.values()), style, label=split, markersize=3)
        if head_epochs:
            ax.axvline(head_epochs + 0.5, color="gray", linestyle=":", label="fine-tune starts")
        ax.set_xlabel("epoch")
        ax.set_title(metric)
        ax.legend()
    return _save(fig, path)


def samples(images_by_class: Dict[str, List[np.ndarray]], path: str) -> str:
    """A row per class of Transform's output images (normalized; shown min..max)."""
    classes = list(images_by_class)
    grid = [images_by_class[name] for name in classes]
    columns = max(1, max(len(row) for row in grid))
    shape = _tile_shape(grid)
    fig, ax = plt.subplots(figsize=(columns * 1.2 + 1, len(classes) * 1.2 + 0.6))
    ax.imshow(_montage(grid), interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([_cell(r, 0, shape, 0)[1] + shape[0] / 2 for r in range(len(classes))],
                  classes)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.suptitle("inputs after Transform, per class")
    return _save(fig, path)
