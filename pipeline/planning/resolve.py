"""Resolve a run's plan from its config, its data and this machine, and check it fits.

This is the I/O around pipeline/planning/plan.py's pure rules: list and probe the
data, detect the hardware, read the memory limit, estimate the training's
memory and refuse (exit 2) before anything heavy runs.
"""
import dataclasses
from typing import Optional, Tuple

from components.image_example_gen.readers.folder_tree import DatasetError
from components.image_example_gen.span_window import resolve as resolve_window
from components.image_example_gen import spans
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.span_store import class_union
from settings.config import PipelineConfig
from pipeline.planning.data_facts import data_facts, split_sizes
from pipeline.planning.memory import MemoryEstimate, check_fits, estimate, memory_limit
from pipeline.planning.model_source import check_model, read_source
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import Plan, make_plan

# Beyond this, per-class evaluation slices and the report stop being useful,
# and the softmax layer dominates the model; refused rather than half-working.
MAX_CLASSES = 10_000


def check_classes(data: str, classes) -> None:
    """A classifier needs 2..MAX_CLASSES classes (TFRecords: known only after ingestion)."""
    if classes is None:
        return
    if len(classes) < 2:
        raise DatasetError(f"--data {data}: only one class ({classes[0]!r}); a classifier "
                           "needs at least two class folders")
    if len(classes) > MAX_CLASSES:
        raise DatasetError(f"--data {data}: {len(classes):,} classes; imagepipe supports up "
                           f"to {MAX_CLASSES:,}")


def read_data_facts(config: PipelineConfig) -> DataFacts:
    """What the plan needs to know of local data: listed, class count checked, probed.

    The one place a run (`resolve_plan`) and the compiler read the data's
    image shape from; the plan puts it into the config. A span pattern's
    facts are its window's (window_facts).
    """
    options = config.ingest_options()
    if spans.is_pattern(config.ingest.data):
        return window_facts(config.ingest.data, options)
    listing = list_dataset(config.ingest.data, options)
    check_classes(config.ingest.data, listing.classes)
    return data_facts(config.ingest.data, listing, options)


def window_facts(pattern: str, options) -> DataFacts:
    """The images of the newest span; the train examples of every span in the window and
    the eval examples of the newest, as ImageExampleGen will write them."""
    # The ready spans, as ImageExampleGen will take them: a span still arriving, or a
    # missing --span, is refused here, before anything runs.
    window = [listed.span for listed in resolve_window(pattern, options).spans]
    listings = [list_dataset(span.root, options, check_groups=False) for span in window]
    classes = class_union(listings)
    check_classes(pattern, classes)
    newest = data_facts(window[-1].root, listings[-1], options)
    trains = [split_sizes(listing, options)[0] for listing in listings]
    train = None if None in trains else sum(trains)
    return dataclasses.replace(newest, train_examples=train,
                               classes=len(classes) if classes is not None else None)


def detect_hardware(config: PipelineConfig) -> str:
    """'tpu' with --tpu, else 'gpu' if TensorFlow sees one, else 'cpu'."""
    if config.cluster.tpu:
        return "tpu"
    import tensorflow as tf
    return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"


def resolve_plan(config: PipelineConfig, hardware: Optional[str] = None,
                 limit: Optional[int] = None) -> Tuple[Plan, MemoryEstimate]:
    """The plan for `config` on this machine (or `hardware`), checked to fit in memory.

    Raises:
      DatasetError: no usable data, or too few or too many classes.
      UsageError: the training would not fit in memory (names the flags); a
        module or weights file that cannot be used (names the file).
    """
    source = read_source(config)
    facts = read_data_facts(config)
    limit = limit or memory_limit()
    plan = make_plan(config, facts, hardware or detect_hardware(config), limit, source)
    c = plan.config
    check_model(plan.trainer_params(), (c.model.image_size, c.model.image_size, c.model.channels),
                plan.facts.classes or 2)
    found = estimate(plan, plan.facts.classes or 2, limit)
    check_fits(found, plan)
    return plan, found
