"""The Beam part of ingestion: read, validate, encode, split, and report.

Runs unchanged on DirectRunner and on distributed runners: workers read files
through tf.io.gfile (local, gs://, ...) and the report is written by a worker.
"""
import bisect
import collections
import hashlib
import json
import os
from typing import Dict, Iterable, List, Sequence, Tuple

import apache_beam as beam
import tensorflow as tf

from components.image_example_gen import encode
from components.image_example_gen.folder_tree import ImageFile, Listing

REPORT_FILE = "ingest_report.json"
LABELS_FILE = "labels.txt"
_SKIPPED = "skipped"


def split_index(relpath: str, buckets: Sequence[int]) -> int:
    """Which split a file goes to, from a hash of its relative path alone.

    `buckets` are cumulative hash-bucket counts, e.g. [80, 100] for 80/20.
    The same path lands in the same split on every run, machine and listing
    order; adding files never moves existing ones between splits.
    """
    bucket = int(hashlib.sha256(relpath.encode("utf-8")).hexdigest(), 16) % buckets[-1]
    return bisect.bisect(buckets, bucket)


class _ReadAndEncode(beam.DoFn):
    """Reads one file and emits its example, or a `skipped` record with the reason."""

    def __init__(self, root: str, classes: List[str]):
        self._root = root
        self._classes = classes

    def process(self, item: ImageFile):
        try:
            with tf.io.gfile.GFile(os.path.join(self._root, item.relpath), "rb") as f:
                data = f.read()
            example = encode.image_to_example(
                data, item.relpath, item.label, self._classes[item.label])
        except (encode.BadImageError, OSError, tf.errors.OpError) as e:
            yield beam.pvalue.TaggedOutput(_SKIPPED, {"path": item.relpath, "reason": str(e)})
            return
        beam.metrics.Metrics.counter("imagepipe", "examples").inc()
        yield example


def _feature_int(example: tf.train.Example, key: str) -> int:
    return example.features.feature[key].int64_list.value[0]


def _shape_key(example: tf.train.Example) -> str:
    return "x".join(str(_feature_int(example, k)) for k in
                    (encode.HEIGHT_KEY, encode.WIDTH_KEY, encode.CHANNELS_KEY))


def build_report(listing: Listing, split_names: Sequence[str],
                 facts: Iterable[Tuple[Tuple[str, str, str], int]],
                 skipped: Iterable[dict]) -> dict:
    """The ingest report, from counts of (split, class, HxWxC) over written examples."""
    per_class = {s: {c: 0 for c in listing.classes} for s in split_names}
    shapes = collections.Counter()
    for (split, class_name, shape), count in facts:
        per_class[split][class_name] += count
        shapes[shape] += count
    return {
        "splits": {s: sum(per_class[s].values()) for s in split_names},
        "classes": listing.classes,
        "per_class": per_class,
        "shapes": dict(shapes.most_common()),
        "skipped": sorted(skipped, key=lambda r: r["path"]),
        "ignored": listing.ignored,
        "empty_classes": listing.empty_classes,
    }


def _write_report(facts, skipped, listing, split_names, out_dir):
    report = build_report(listing, split_names, facts, skipped)
    with tf.io.gfile.GFile(os.path.join(out_dir, REPORT_FILE), "w") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)


def check_splits(report_dir: str) -> dict:
    """Reads the report and fails, naming skipped files, if any split came out empty.

    An empty split would otherwise surface later as an obscure error in
    StatisticsGen or the Trainer.
    """
    with tf.io.gfile.GFile(os.path.join(report_dir, REPORT_FILE)) as f:
        report = json.load(f)
    empty = [name for name, count in report["splits"].items() if count == 0]
    if empty:
        skipped = report["skipped"]
        example = f"; first: {skipped[0]['path']}: {skipped[0]['reason']}" if skipped else ""
        raise ValueError(
            f"split(s) {', '.join(empty)} got no images: {sum(report['splits'].values())} "
            f"ingested, {len(skipped)} skipped as undecodable{example}")
    return report


@beam.ptransform_fn
def IngestImages(pipeline: beam.Pipeline, root: str, listing: Listing,  # noqa: N802 (Beam style)
                 split_names: Sequence[str], buckets: Sequence[int],
                 report_dir: str) -> Dict[str, beam.PCollection]:
    """Ingests `listing` into one PCollection of tf.Examples per split.

    As a side effect, writes `report_dir/ingest_report.json`.
    """
    decoded = (pipeline
               | "ListFiles" >> beam.Create(listing.files, reshuffle=True)
               | "ReadAndEncode" >> beam.ParDo(_ReadAndEncode(root, listing.classes))
               .with_outputs(_SKIPPED, main="examples"))
    parts = decoded.examples | "Split" >> beam.Partition(
        lambda ex, n: split_index(
            ex.features.feature[encode.FILENAME_KEY].bytes_list.value[0].decode("utf-8"),
            buckets),
        len(buckets))
    splits = dict(zip(split_names, parts))
    facts = [pcoll | f"Facts[{name}]" >> beam.Map(
        lambda ex, s: (s, listing.classes[_feature_int(ex, encode.LABEL_KEY)], _shape_key(ex)),
        name) for name, pcoll in splits.items()]
    _ = (facts | "AllFacts" >> beam.Flatten()
         | "CountFacts" >> beam.combiners.Count.PerElement()
         | "FactList" >> beam.combiners.ToList()
         | "WriteReport" >> beam.Map(
             _write_report,
             skipped=beam.pvalue.AsList(decoded[_SKIPPED]),
             listing=listing, split_names=list(split_names), out_dir=report_dir))
    return splits
