"""The Beam part of ingestion: read, validate, encode, split, write, and report.

Runs unchanged on DirectRunner and on distributed runners: workers read and
write files through core/storage (local, gs://, ...), and the report is
written by a worker. The listing is cut into shards; each is read, encoded
and written by one worker, as one file per split.
"""
import collections
import dataclasses
import json
import os
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from core.contract import (DATA_HEALTH_KEY, INGEST_REPORT_FILE, LABELS_FILE, SPLITS,
                           read_ingest_report)
from components.image_example_gen.data_health import hashing
from components.image_example_gen.data_health.report import problems
from components.image_example_gen import health
from components.image_example_gen.dedupe import edit_shards, facts_after
from components.image_example_gen.encoding import encode, parallel, shards
from components.image_example_gen.encoding.interleave import round_robin
from components.image_example_gen.encoding.shard_writer import shard_name, write_shard
from components.image_example_gen.options import IngestOptions, split_index
from components.image_example_gen.readers.folder_tree import ImageFile, Listing, splits_hashed
from components.image_example_gen.readers.units import read_file_jobs, read_unit
from core.storage import files

_SKIPPED = "skipped"
_FACTS = "facts"
_HEALTH = "health"


class _IngestShard(beam.DoFn):
    """Encodes one shard and writes its files; emits (fact, count) pairs, skipped records
    and health rows (write_shard's).

    Splitting, serializing and writing happen here rather than in further
    Beam stages: on DirectRunner each stage costs per element about as much
    as encoding a small image does. With a pool (local files, see
    parallel.local_processes), shards of image files go to worker processes
    as they arrive, and their results are emitted when the bundle finishes.
    """

    def __init__(self, root: str, classes: Optional[List[str]], options: IngestOptions,
                 split_dirs: Dict[str, str], processes: int, groups: Dict[str, str]):
        self._root, self._classes, self._options = root, classes, options
        self._groups = groups
        self._split_dirs, self._processes = split_dirs, processes
        self._pool, self._pending = None, []

    def setup(self):
        local = not any(files.is_remote(p) for p in (self._root, *self._split_dirs.values()))
        if self._processes > 1 and local:
            self._pool = parallel.EncoderPool(self._processes)

    def teardown(self):
        if self._pool is not None:
            self._pool.close()

    def start_bundle(self):
        self._pending = []

    def process(self, line: str):
        index, count, rows = shards.shard_rows(line)
        kind = shards.worker_kind(rows) if self._pool is not None else None
        if kind == "files" and any(files.is_remote(row[1]) for row in rows):
            kind = None  # a manifest's gs:// images: read here, by threads
        if kind is not None:  # to a worker, untouched: no per-unit work here
            self._pending.append((index, count, self._submit(kind, shard_name(index, count),
                                                             rows)))
            return
        units = shards.units_of(rows)
        if isinstance(units[0], ImageFile):
            jobs = read_file_jobs(units, self._root, self._classes, self._options, self._groups)
            items = encode.encode_files(jobs, self._options.max_pixels, hashing.ENABLED)
        else:
            items = self._read_units(units)
        rows = []
        facts, skipped = write_shard(items, self._split_dirs, shard_name(index, count), rows)
        _progress(index, count, facts, skipped)
        yield from _outputs(facts, skipped, rows)

    def finish_bundle(self):
        for index, count, future in self._pending:
            facts, skipped, rows = future.result()
            _progress(index, count, facts, skipped)
            for output in _outputs(facts, skipped, rows):
                if isinstance(output, beam.pvalue.TaggedOutput):
                    yield beam.pvalue.TaggedOutput(
                        output.tag, GlobalWindows.windowed_value(output.value))
                else:
                    yield GlobalWindows.windowed_value(output)
        self._pending = []

    def _submit(self, kind: str, name: str, rows: List[list]):
        """A shard's rows to the encoder pool (shards.worker_kind); the result's future."""
        if kind == "files":
            file_rows = [row[1:] for row in rows]  # [relpath, label, split]
            groups = {row[0]: self._groups[row[0]] for row in file_rows
                      if row[0] in self._groups}
            return self._pool.submit({**self._context(), "groups": groups}, name, file_rows)
        context = {**self._context(), "options": dataclasses.asdict(self._options),
                   "groups": self._groups}
        return self._pool.submit_units(context, name, rows)

    def _context(self) -> dict:
        """What every shard request shares (see encode_worker.shard_request)."""
        return {"root": self._root, "classes": self._classes, "buckets": self._options.buckets,
                "max_pixels": self._options.max_pixels, "split_dirs": self._split_dirs,
                "hashes": hashing.ENABLED}

    def _read_units(self, units: list) -> Iterator[encode.Encoded]:
        """The units' examples, one from each in turn (shards.plan_shards says why)."""
        return round_robin([read_unit(unit, self._root, self._classes, self._options,
                                      self._split_of, self._groups) for unit in units])

    def _split_of(self, relpath: str) -> str:
        return SPLITS[split_index(relpath, self._options.buckets)]


def _progress(index: int, count: int, facts: Dict[encode.Fact, int], skipped: List[dict]):
    """A live line per shard (stdout of the process running the DoFn)."""
    print(f"          ingest shard {index + 1}/{count}: {sum(facts.values())} images"
          + (f", {len(skipped)} skipped" if skipped else ""), flush=True)


def _outputs(facts: Dict[encode.Fact, int], skipped: List[dict], rows: List[list]) -> Iterator:
    yield from facts.items()
    for record in skipped:
        yield beam.pvalue.TaggedOutput(_SKIPPED, record)
    if rows:  # one element per shard: each Beam element costs about one image's encoding
        yield beam.pvalue.TaggedOutput(_HEALTH, health.rows_text(rows))


def _classes_from_facts(facts) -> List[str]:
    """Class names by label id when the listing could not know them (TFRecords)."""
    names = {label: text for (_, label, text, *_), _ in facts}
    return [names.get(i, str(i)) for i in range(max(names) + 1)] if names else []


TOP_SHAPES = 5


def _spread(counts: collections.Counter) -> dict:
    """min / median / max of a counted integer quantity."""
    ordered = sorted(counts)
    total, seen = sum(counts.values()), 0
    for value in ordered:
        seen += counts[value]
        if 2 * seen >= total:
            return {"min": ordered[0], "median": value, "max": ordered[-1]}
    return {}


def summarize_shapes(shapes: collections.Counter) -> dict:
    """Counts of "HxWxC" shapes, summarized: a photo set has nearly one shape per image.

    The most common few, how many distinct, and the spread of each side.
    """
    sides = [collections.Counter(), collections.Counter()]
    channels = collections.Counter()
    for shape, count in shapes.items():
        height, width, depth = (int(v) for v in shape.split("x"))
        sides[0][height] += count
        sides[1][width] += count
        channels[str(depth)] += count
    return {"most_common": dict(shapes.most_common(TOP_SHAPES)), "distinct": len(shapes),
            "height": _spread(sides[0]), "width": _spread(sides[1]),
            "channels": dict(channels.most_common())}


def _pixel_summary(brightness: List[int], grayscale: int) -> dict:
    """Pixel statistics of some examples: brightness histogram, mean, grayscale count.

    The mean is taken from the buckets' centres, so it is within half a
    bucket (8 levels of 255) of the exact mean; null without examples.
    """
    total = sum(brightness)
    centres = sum(count * (bucket + 0.5) * encode.BUCKET_WIDTH
                  for bucket, count in enumerate(brightness))
    return {"brightness": brightness, "mean": round(centres / total, 1) if total else None,
            "grayscale": grayscale}


def summarize_pixels(facts: List[Tuple[encode.Fact, int]]) -> dict:
    """The report's "pixels": `_pixel_summary` over all examples, and "per_split".

    Drift detection (components/drift_validator/verdict.py) compares these between spans.
    """
    histograms = {s: [0] * encode.BRIGHTNESS_BUCKETS for s in SPLITS}
    grayscale = dict.fromkeys(SPLITS, 0)
    for (split, *_, bucket, gray), count in facts:
        histograms[split][bucket] += count
        grayscale[split] += gray * count
    overall = [sum(counts) for counts in zip(*histograms.values())]
    return {**_pixel_summary(overall, sum(grayscale.values())),
            "per_split": {s: _pixel_summary(histograms[s], grayscale[s]) for s in SPLITS}}


def ingest_report(listing: Listing, facts: Iterable[Tuple[encode.Fact, int]],
                  skipped: Iterable[dict]) -> dict:
    """The ingest report, from counts of each encode.Fact over written examples."""
    facts = list(facts)
    classes = listing.classes if listing.classes is not None else _classes_from_facts(facts)
    per_class = {s: {c: 0 for c in classes} for s in SPLITS}
    shapes = collections.Counter()
    for (split, label, _, shape, *_), count in facts:
        per_class[split][classes[label]] += count
        shapes[shape] += count
    return {
        "format": listing.format,
        "splits": {s: sum(per_class[s].values()) for s in SPLITS},
        "classes": classes,
        "per_class": per_class,
        "shapes": summarize_shapes(shapes),
        "pixels": summarize_pixels(facts),
        "skipped": sorted([*listing.skipped, *skipped], key=lambda r: r["path"]),
        "ignored": listing.ignored,
        "empty_classes": listing.empty_classes,
        "unused_folders": listing.unused,
    }


def _write_report(facts, skipped, rows, listing, out_dir, manifest, split_dirs, dedupe,
                  regroup):
    """The last step: every shard is written, so the manifest can go.

    Data health is computed from every example's hashes (`rows`, health.rows_text per
    shard); with `regroup`, copies hashed apart move to their group's split, and with
    `dedupe`, the examples it drops are filtered out of the shards, in one pass.
    """
    section = None
    if hashing.ENABLED:
        classes = listing.classes if listing.classes is not None else \
            _classes_from_facts(facts)
        section, rows, dropped, moves = health.ingest_health(rows, dedupe, classes, out_dir,
                                                             regroup)
        edit_shards(split_dirs, dropped, moves)
        facts = facts_after(facts, rows, dropped, moves) if dropped or moves else facts
    report = ingest_report(listing, facts, skipped)
    if section is not None:
        report[DATA_HEALTH_KEY] = section
    files.write_text(os.path.join(out_dir, INGEST_REPORT_FILE),
                     json.dumps(report, indent=2, ensure_ascii=False))
    files.remove(manifest)


def finish_ingest(report_dir: str, strict: bool) -> dict:
    """Checks the report and writes labels.txt; fails naming files if it must.

    Fails if any split came out empty (that would surface later as an obscure
    error in StatisticsGen or the Trainer), or, with `strict`, if any file
    was skipped or data health found duplicates or leakage (even with
    --dedupe, which drops them: strict refuses such data outright).
    """
    report = read_ingest_report(report_dir)
    skipped = report["skipped"]
    if strict and skipped:
        names = "; ".join(f"{r['path']}: {r['reason']}" for r in skipped[:5])
        raise ValueError(f"--strict: {len(skipped)} file(s) could not be ingested: {names}")
    found = problems(report[DATA_HEALTH_KEY]) if DATA_HEALTH_KEY in report else None
    if strict and found:
        raise ValueError(f"--strict: the data has copies: {found} (see {INGEST_REPORT_FILE}'s "
                         f"{DATA_HEALTH_KEY})")
    empty = [name for name, count in report["splits"].items() if count == 0]
    if empty:
        example = f"; first: {skipped[0]['path']}: {skipped[0]['reason']}" if skipped else ""
        raise ValueError(
            f"split(s) {', '.join(empty)} got no images: {sum(report['splits'].values())} "
            f"ingested, {len(skipped)} skipped as undecodable{example}")
    files.write_text(os.path.join(report_dir, LABELS_FILE),
                     "".join(name + "\n" for name in report["classes"]))
    return report


@beam.ptransform_fn
def IngestImages(pipeline: beam.Pipeline, root: str, listing: Listing,  # noqa: N802 (Beam style)
                 options: IngestOptions, split_dirs: Dict[str, str], report_dir: str,
                 processes: int = 1) -> beam.PCollection:
    """Ingests `listing` into gzipped TFRecords of tf.Example, in `split_dirs[split]`.

    Also writes `report_dir/ingest_report.json`. `processes` > 1 encodes
    images on that many local processes (see parallel.local_processes).
    """
    manifest = os.path.join(report_dir, shards.MANIFEST_FILE)
    files.makedirs(report_dir)
    # As many shards as a multiple of the encoding processes, where _IngestShard uses them.
    local = not any(files.is_remote(p) for p in (root, *split_dirs.values()))
    shards.write_manifest(manifest, shards.plan_shards(listing.files,
                                                       processes if local else 1))
    read = (pipeline
            | "Start" >> beam.Impulse()
            | "ReadManifest" >> beam.FlatMap(lambda _: shards.manifest_lines(manifest))
            | "Spread" >> beam.Reshuffle()
            | "EncodeAndWrite" >> beam.ParDo(_IngestShard(
                root, listing.classes, options, split_dirs, processes, listing.groups))
            .with_outputs(_SKIPPED, _HEALTH, main=_FACTS))
    return (read[_FACTS]
            | "CountFacts" >> beam.CombinePerKey(sum)
            | "FactList" >> beam.combiners.ToList()
            | "WriteReport" >> beam.Map(
             _write_report, skipped=beam.pvalue.AsList(read[_SKIPPED]),
             rows=beam.pvalue.AsList(read[_HEALTH]),
             # Without its file list: Beam pickles this closure, several times.
             listing=dataclasses.replace(listing, files=[], groups={}), out_dir=report_dir,
             manifest=manifest, split_dirs=split_dirs, dedupe=options.dedupe,
             regroup=splits_hashed(listing)))
