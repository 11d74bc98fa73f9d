"""A pushed version with a real monitoring reference, and windows of images to judge.

The model is the session's tiny exported SavedModel (tests/support/transformed.py,
8x8 px, classes c0 and c1). Its reference is what the pipeline writes: the eval
images' answers from the model itself, and TFDV's statistics of the training images'
features (the in-memory generator over a DataFrame, with StatisticsGen's options).
The training images are dark; a window of them inverted is bright.
"""
import json
import pathlib
import shutil
from typing import List

import numpy as np
from PIL import Image

VERSION = 1764241000
DARK = 80  # the training images' pixels lie in 0..DARK


def write_images(folder: pathlib.Path, count: int, inverted: bool = False,
                 seed: int = 0) -> List[pathlib.Path]:
    """`count` dark 8x8 RGB PNGs (bright ones when inverted), half in c0/, half in c1/."""
    rng, paths = np.random.default_rng(seed), []
    for index in range(count):
        pixels = rng.integers(0, DARK, (8, 8, 3), dtype=np.uint8)
        path = folder / f"c{index % 2}" / f"{index}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(255 - pixels if inverted else pixels).save(path)
        paths.append(path)
    return paths


def monitoring_reference(model_dir: str, paths: List[pathlib.Path]):
    """(reference.json's content, the train statistics) for these images."""
    import pandas as pd

    from monitor import measures, scoring
    from monitor.features import measure_image
    from monitor.records import Record
    images = [p.read_bytes() for p in paths]
    frame = pd.DataFrame([measure_image(b, 10**8).example_features() for b in images])
    records = [Record(str(p), image=b) for p, b in zip(paths, images)]
    answers = list(scoring.score_window(records, model_dir, 2, 10**8))
    truth = [int(p.parent.name[1]) for p in paths]
    predicted = [a.predicted for a in answers]
    return {"format": 1, "labels": ["c0", "c1"],
            "eval": {"count": len(paths),
                     "accuracy": float(np.mean(np.equal(predicted, truth))),
                     "predicted": predicted,
                     "confidence": [round(a.confidence, 4) for a in answers],
                     "label": truth}}, measures.statistics(frame)


def push_version(output: pathlib.Path, model_dir: str, reference, version: int = VERSION,
                 with_reference: bool = True) -> pathlib.Path:
    """The model pushed as OUTPUT/serving/imagepipe/VERSION, with its monitoring reference."""
    target = output / "serving" / "imagepipe" / str(version)
    shutil.copytree(model_dir, target)
    if with_reference:
        folder = target / "assets.extra" / "monitoring"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "reference.json").write_text(json.dumps(reference[0]))
        (folder / "train_statistics.pb").write_bytes(reference[1].SerializeToString())
    return target
