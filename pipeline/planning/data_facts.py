"""What the planner knows of a dataset before ingestion: classes, split sizes, image sides.

Reads file names and image headers only. Split sizes are exact for arrays with
fixed splits. For folder trees they are the path hash's split that ingestion
starts from; ingestion then moves each copy to its duplicate group's split
(data_health/together.py), which needs every image decoded, so the run's
counts can differ by the copies moved.
"""
import dataclasses
from typing import Optional, Tuple

from core.contract import SPLITS
from components.image_example_gen.readers.folder_tree import ImageFile, Listing, splits_hashed
from components.image_example_gen.options import IngestOptions, split_index
from pipeline.planning.data_probe import probe_images


@dataclasses.dataclass(frozen=True)
class DataFacts:
    """What the plan knows of the data before ingestion."""

    classes: Optional[int]  # None for TFRecords: labels are read during ingestion
    train_examples: Optional[int]  # None when unknown before ingestion (TFRecords)
    eval_examples: Optional[int]
    side: int  # most common long side, pixels
    side_median: int
    side_max: int
    channels: int
    # The split sizes are the path hash's, before ingestion moves each copy to its
    # duplicate group's split: a few images may change sides.
    hashed_split: bool = False


def split_sizes(listing: Listing, options: IngestOptions) -> Tuple[Optional[int], Optional[int]]:
    """(train, eval) image counts, or (None, None) for TFRecords (counted at ingestion)."""
    if listing.format == "tfrecord":
        return None, None
    counts = [0, 0]
    for unit in listing.files:
        if isinstance(unit, ImageFile):  # a folder tree's or a manifest's
            index = (SPLITS.index(unit.split) if unit.split else
                     split_index(unit.relpath, options.buckets))
            counts[index] += 1
        elif unit.split:
            counts[SPLITS.index(unit.split)] += unit.stop - unit.start
        else:  # hash-split arrays: the expected shares
            images = unit.stop - unit.start
            held_out = images * options.eval_percent // 100
            counts[0] += images - held_out
            counts[1] += held_out
    return counts[0], counts[1]


def data_facts(root: str, listing: Listing, options: IngestOptions) -> DataFacts:
    """DataFacts from a listing (see components/image_example_gen/formats.list_dataset)."""
    sample = probe_images(root, listing, options)
    train, evaluation = split_sizes(listing, options)
    classes = len(listing.classes) if listing.classes is not None else None
    return DataFacts(classes, train, evaluation, sample.side, sample.side_median,
                     sample.side_max, sample.channels,
                     listing.format != "tfrecord" and splits_hashed(listing))
