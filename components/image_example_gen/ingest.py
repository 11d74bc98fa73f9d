"""The Beam part of ingestion: read, validate, encode, split, and report.

Runs unchanged on DirectRunner and on distributed runners: workers read files
through tf.io.gfile (local, gs://, ...) and the report is written by a worker.
Each listed unit (an image file, a chunk of an array file, a TFRecord file)
is read by one worker and yields (split, example) pairs or skipped records.
"""
import bisect
import collections
import dataclasses
import hashlib
import json
import os
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import apache_beam as beam
import tensorflow as tf
from apache_beam.transforms.window import GlobalWindows

from components.image_example_gen import encode
from components.image_example_gen.folder_tree import Listing
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers import read_unit

REPORT_FILE = "ingest_report.json"
LABELS_FILE = "labels.txt"
SPLITS = ("train", "eval")
_SKIPPED = "skipped"
_FACTS = "facts"


def split_index(relpath: str, buckets: Sequence[int]) -> int:
    """Which split a file goes to, from a hash of its relative path alone.

    `buckets` are cumulative hash-bucket counts, e.g. [80, 100] for 80/20.
    The same path lands in the same split on every run, machine and listing
    order; adding files never moves existing ones between splits.
    """
    bucket = int(hashlib.sha256(relpath.encode("utf-8")).hexdigest(), 16) % buckets[-1]
    return bisect.bisect(buckets, bucket)


class _ReadUnit(beam.DoFn):
    """Reads one unit; emits serialized examples tagged by split, skipped records, facts.

    Splitting, serializing and counting happen here rather than in further
    Beam stages: on DirectRunner each stage costs per element about as much
    as encoding a small image does.
    """

    def __init__(self, root: str, classes: Optional[List[str]], options: IngestOptions):
        self._root, self._classes, self._options = root, classes, options
        self._facts = collections.Counter()

    def start_bundle(self):
        self._facts = collections.Counter()

    def process(self, unit):
        for item in read_unit(unit, self._root, self._classes, self._options):
            if isinstance(item, dict):
                yield beam.pvalue.TaggedOutput(_SKIPPED, item)
                continue
            split, example = item
            if split is None:
                name = example.features.feature[encode.FILENAME_KEY].bytes_list.value[0]
                split = SPLITS[split_index(name.decode("utf-8"), self._options.buckets)]
            self._facts[_fact(split, example)] += 1
            yield beam.pvalue.TaggedOutput(split, example.SerializeToString(deterministic=True))

    def finish_bundle(self):
        for fact, count in self._facts.items():
            yield beam.pvalue.TaggedOutput(_FACTS, GlobalWindows.windowed_value((fact, count)))


def _feature_int(example: tf.train.Example, key: str) -> int:
    return example.features.feature[key].int64_list.value[0]


def _fact(split: str, example: tf.train.Example) -> Tuple[str, int, str, str]:
    """(split, label, class text, HxWxC) of one written example."""
    text = example.features.feature[encode.CLASS_TEXT_KEY].bytes_list.value[0].decode("utf-8")
    shape = "x".join(str(_feature_int(example, k)) for k in
                     (encode.HEIGHT_KEY, encode.WIDTH_KEY, encode.CHANNELS_KEY))
    return split, _feature_int(example, encode.LABEL_KEY), text, shape


def _classes_from_facts(facts) -> List[str]:
    """Class names by label id when the listing could not know them (TFRecords)."""
    names = {label: text for (_, label, text, _), _ in facts}
    return [names.get(i, str(i)) for i in range(max(names) + 1)] if names else []


def build_report(listing: Listing, facts: Iterable[Tuple[Tuple[str, int, str, str], int]],
                 skipped: Iterable[dict]) -> dict:
    """The ingest report, from counts of (split, label, text, HxWxC) over written examples."""
    facts = list(facts)
    classes = listing.classes if listing.classes is not None else _classes_from_facts(facts)
    per_class = {s: {c: 0 for c in classes} for s in SPLITS}
    shapes = collections.Counter()
    for (split, label, _, shape), count in facts:
        per_class[split][classes[label]] += count
        shapes[shape] += count
    return {
        "format": listing.format,
        "splits": {s: sum(per_class[s].values()) for s in SPLITS},
        "classes": classes,
        "per_class": per_class,
        "shapes": dict(shapes.most_common()),
        "skipped": sorted(skipped, key=lambda r: r["path"]),
        "ignored": listing.ignored,
        "empty_classes": listing.empty_classes,
        "unused_folders": listing.unused,
    }


def _write_report(facts, skipped, listing, out_dir):
    report = build_report(listing, facts, skipped)
    with tf.io.gfile.GFile(os.path.join(out_dir, REPORT_FILE), "w") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)


def read_report(report_dir: str) -> dict:
    """The ingest_report.json written next to the examples."""
    with tf.io.gfile.GFile(os.path.join(report_dir, REPORT_FILE)) as f:
        return json.load(f)


def finish_ingest(report_dir: str, strict: bool) -> dict:
    """Checks the report and writes labels.txt; fails naming files if it must.

    Fails if any split came out empty (that would surface later as an obscure
    error in StatisticsGen or the Trainer), or, with `strict`, if any file
    was skipped.
    """
    report = read_report(report_dir)
    skipped = report["skipped"]
    if strict and skipped:
        names = "; ".join(f"{r['path']}: {r['reason']}" for r in skipped[:5])
        raise ValueError(f"--strict: {len(skipped)} file(s) could not be ingested: {names}")
    empty = [name for name, count in report["splits"].items() if count == 0]
    if empty:
        example = f"; first: {skipped[0]['path']}: {skipped[0]['reason']}" if skipped else ""
        raise ValueError(
            f"split(s) {', '.join(empty)} got no images: {sum(report['splits'].values())} "
            f"ingested, {len(skipped)} skipped as undecodable{example}")
    with tf.io.gfile.GFile(os.path.join(report_dir, LABELS_FILE), "w") as f:
        f.write("".join(name + "\n" for name in report["classes"]))
    return report


@beam.ptransform_fn
def IngestImages(pipeline: beam.Pipeline, root: str, listing: Listing,  # noqa: N802 (Beam style)
                 options: IngestOptions, report_dir: str) -> Dict[str, beam.PCollection]:
    """Ingests `listing` into one PCollection of serialized tf.Examples per split.

    As a side effect, writes `report_dir/ingest_report.json`.
    """
    read = (pipeline
            | "ListUnits" >> beam.Create(listing.files, reshuffle=True)
            | "ReadAndEncode" >> beam.ParDo(_ReadUnit(root, listing.classes, options))
            .with_outputs(_SKIPPED, _FACTS, *SPLITS, main="unused"))
    _ = (read[_FACTS]
         | "CountFacts" >> beam.CombinePerKey(sum)
         | "FactList" >> beam.combiners.ToList()
         | "WriteReport" >> beam.Map(
             _write_report, skipped=beam.pvalue.AsList(read[_SKIPPED]),
             # Without its file list: Beam pickles this closure, several times.
             listing=dataclasses.replace(listing, files=[]), out_dir=report_dir))
    return {name: read[name] for name in SPLITS}
