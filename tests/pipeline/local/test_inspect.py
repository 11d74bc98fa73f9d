"""`imagepipe inspect`: planted duplicates, conflicts and leaks are found; clean images are not."""
import io
import json
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from core.contract import SPLITS
from components.image_example_gen.options import split_index
from cli import main as cli
from settings.config import PipelineConfig
from pipeline.local.inspect import format_summary, inspect_data

CLASSES = ("daisy", "rose", "tulip")
PLANTED = 15  # of each kind


def _photo(rng: random.Random) -> Image.Image:
    """A smooth random colour field with a few shapes, 130-220 px, of any aspect.

    Large enough that a copy at half size still gets a perceptual hash
    (hashing.SMALL_SIDE).
    """
    size = (rng.randint(130, 220), rng.randint(130, 220))
    coarse = np.random.default_rng(rng.getrandbits(32)).integers(0, 256, (4, 4, 3), np.uint8)
    image = Image.fromarray(coarse).resize(size, Image.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(3):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        box = [x, y, x + rng.randint(10, 60), y + rng.randint(10, 60)]
        colour = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    return image


def _save(image: Image.Image, path, quality: int = 92) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, "JPEG", quality=quality)


def _other_split_name(cls: str, stem: str, split: str, buckets) -> str:
    """A file name in `cls` whose hashed split is not `split`."""
    for n in range(1000):
        name = f"{cls}/{stem}_x{n}.jpg"
        if SPLITS[split_index(name, buckets)] != split:
            return name
    raise AssertionError("no name found")


def _plant(root, rng: random.Random, buckets):
    """Clean images, then PLANTED copies of each kind; returns {kind: [(a, b)]}, clean."""
    originals = []
    for i in range(300):
        relpath = f"{CLASSES[i % 3]}/img{i:03d}.jpg"
        _save(_photo(rng), root / relpath)
        originals.append(relpath)
    sources = iter(originals)
    planted = {kind: [] for kind in ("exact", "quality", "resized", "conflict", "leak")}
    for kind, pairs in planted.items():
        for _ in range(PLANTED):
            source = next(sources)
            cls, name = source.split("/")
            image = Image.open(root / source)
            if kind == "leak":
                copy = _other_split_name(cls, name[:-4],
                                         SPLITS[split_index(source, buckets)], buckets)
            else:
                other = CLASSES[(CLASSES.index(cls) + 1) % 3] if kind == "conflict" else cls
                copy = f"{other}/{kind}_{name}"
            if kind in ("exact", "conflict", "leak"):
                (root / copy).write_bytes((root / source).read_bytes())
            elif kind == "quality":
                _save(image, root / copy, quality=rng.randint(60, 80))
            else:
                scale = rng.uniform(0.5, 0.8)
                _save(image.resize((int(image.width * scale), int(image.height * scale)),
                                   Image.BILINEAR), root / copy)
            pairs.append((source, copy))
    return planted, originals[5 * PLANTED:]


def test_planted_defects_are_found_and_clean_images_are_not(tmp_path):
    options = PipelineConfig.from_values(data=str(tmp_path)).ingest_options()
    planted, clean = _plant(tmp_path / "data", random.Random(7), options.buckets)
    result = inspect_data(str(tmp_path / "data"), options, processes=2)

    def grouped(pair, groups, kind=None):
        return any(set(pair) <= set(g["paths"]) and kind in (None, g["kind"]) for g in groups)

    leaks = {(p["eval"], t) for p in result["leakage"]["pairs"] for t in p["train"]}
    found = {
        "exact": sum(grouped(p, result["duplicates"], "exact") for p in planted["exact"]),
        "quality": sum(grouped(p, result["duplicates"], "near") for p in planted["quality"]),
        "resized": sum(grouped(p, result["duplicates"], "near") for p in planted["resized"]),
        "conflict": sum(grouped(p, result["label_conflicts"]) for p in planted["conflict"]),
        # Hashed into different splits, kept together as a run keeps them: no leak.
        "leak": sum(grouped(p, result["duplicates"], "exact") and p not in leaks
                    and p[::-1] not in leaks for p in planted["leak"])}
    assert all(count >= 0.9 * PLANTED for count in found.values()), found
    assert result["split"]["rule"] == "copies together" and not leaks
    assert result["split"]["moved"] >= 0.9 * PLANTED
    flagged = {p for g in result["duplicates"] for p in g["paths"]} | {e for e, _ in leaks}
    assert len(flagged & set(clean)) <= 0.01 * len(clean), flagged & set(clean)
    assert result["images"] == 300 + 5 * PLANTED and result["skipped"] == []
    assert result["class_counts"] == {"daisy": 125, "rose": 125, "tulip": 125}
    assert "label conflicts: 15 group(s)" in format_summary(result)


def test_inspect_command_writes_json_and_rejects_bad_data(tmp_path, make_image, capsys):
    for i in range(4):
        make_image(tmp_path / "data" / "a" / f"{i}.png", size=(16, 16), seed=i)
        make_image(tmp_path / "data" / "b" / f"{i}.png", size=(16, 16), seed=10 + i)
    (tmp_path / "data" / "b" / "copy.png").write_bytes(
        (tmp_path / "data" / "a" / "0.png").read_bytes())
    out = tmp_path / "health.json"
    assert cli.main(["inspect", "--data", str(tmp_path / "data"), "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["duplicates"] == [{"kind": "exact", "paths": ["a/0.png", "b/copy.png"],
                                      "labels": ["a", "b"]}]
    assert written["label_conflicts"] == written["duplicates"]
    assert "label conflicts: 1 group(s)" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "data").rglob("*")) == sorted(
        ["a", "b", *[f"{i}.png" for i in range(4) for _ in (0, 1)], "copy.png"])
    assert cli.main(["inspect", "--data", str(tmp_path / "missing")]) == 2
    assert "--data" in capsys.readouterr().err


def test_splits_the_data_gives_are_kept_and_their_leaks_reported(tmp_path, make_image):
    for split in ("train", "eval"):
        for i in range(3):
            make_image(tmp_path / split / "a" / f"{i}.png", size=(16, 16), seed=i)
    (tmp_path / "eval" / "a" / "copy.png").write_bytes(
        (tmp_path / "train" / "a" / "0.png").read_bytes())
    options = PipelineConfig.from_values(data=str(tmp_path)).ingest_options()
    result = inspect_data(str(tmp_path), options, processes=1)
    assert result["split"] == {"rule": "given", "moved": 0}
    assert result["leakage"]["count"] >= 1
    assert "split: given" in format_summary(result)
