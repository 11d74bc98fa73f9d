"""bench.training.choices: the validation part is carved from the run's train split alone."""
import numpy as np
from PIL import Image

from bench.training.choices import (TRAIN, VALIDATION, VALIDATION_PERCENT, carve, carve_items,
                                    lay_out, run_items, validation_bucket)
from core.contract import EVAL
from core.contract import TRAIN as RUN_TRAIN
from components.image_example_gen.data_health.groups import HealthItem
from components.image_example_gen.options import split_index
from components.image_example_gen.readers.folder_tree import list_class_folders


def _run_splits(count: int) -> dict:
    """{relpath: the run's split} of `count` paths, by ingestion's path hash (80/20)."""
    paths = [f"class{i % 5}/{i:05d}.jpg" for i in range(count)]
    return {path: (RUN_TRAIN, EVAL)[split_index(path, [80, 100])] for path in paths}


def test_the_validation_part_is_a_fifth_of_train_and_never_an_eval_image():
    splits = _run_splits(5000)
    carved = carve(splits)
    train = {path for path, split in splits.items() if split == RUN_TRAIN}
    validation = {path for path, side in carved.items() if side == VALIDATION}
    assert set(carved) == train  # every train image on one side, no eval image at all
    assert not validation & {path for path, split in splits.items() if split == EVAL}
    assert 0.17 < len(validation) / len(train) < 0.23  # VALIDATION_PERCENT = 20
    assert VALIDATION_PERCENT == 20


def test_the_carve_is_deterministic_and_independent_of_the_split_hash():
    splits = _run_splits(5000)
    reordered = dict(reversed(list(splits.items())))
    assert carve(splits) == carve(reordered) == carve(dict(splits))
    # The second hash picks a fifth of the eval paths too: it does not follow the first.
    eval_paths = [path for path, split in splits.items() if split == EVAL]
    share = np.mean([validation_bucket(path) < VALIDATION_PERCENT for path in eval_paths])
    assert 0.15 < share < 0.25


def test_copies_stay_on_one_side_of_the_carve():
    splits = _run_splits(400)
    carved = carve(splits)
    kept = next(p for p, side in sorted(carved.items()) if side == TRAIN)
    held = next(p for p, side in sorted(carved.items()) if side == VALIDATION)
    items = [HealthItem(path, "same" if path in (kept, held) else path, None, split, "c")
             for path, split in splits.items()]
    moved = carve_items(items)
    assert set(moved) == set(carved)
    assert moved[kept] == moved[held]  # the group's first path decides
    assert {p: s for p, s in moved.items() if p not in (kept, held)} == \
        {p: s for p, s in carved.items() if p not in (kept, held)}


def _tree(root, count: int):
    rng = np.random.default_rng(0)
    for i in range(count):
        folder = root / f"class{i % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
        Image.fromarray(pixels).resize((80, 80)).save(folder / f"{i:03d}.png")
    return root


def test_the_laid_out_tree_holds_only_train_images_and_keeps_its_splits(tmp_path):
    data = _tree(tmp_path / "data", 60)
    items = run_items(str(data))
    assert {i.relpath: i.split for i in items} == \
        {i.relpath: (RUN_TRAIN, EVAL)[split_index(i.relpath, [80, 100])] for i in items}
    carved = carve_items(items)
    counts = lay_out(str(data), carved, str(tmp_path / "tree"))
    assert counts[TRAIN] + counts[VALIDATION] == sum(i.split == RUN_TRAIN for i in items)
    listing = list_class_folders(str(tmp_path / "tree"))  # as ingestion lists it
    given = {unit.relpath.split("/", 1)[1]: unit.split for unit in listing.files}
    assert given == {path: {TRAIN: RUN_TRAIN, VALIDATION: EVAL}[side]
                     for path, side in carved.items()}
