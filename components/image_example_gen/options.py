"""IngestOptions: how to read a dataset; the split rule that encoding workers apply too.

Encoding workers import it, so it imports nothing heavy.
"""
import bisect
import dataclasses
import hashlib
from typing import List, Optional, Sequence, Tuple

FORMATS = ("auto", "folder", "idx", "npz", "tfrecord", "vertex-csv", "vertex-jsonl", "csv",
           "hf-parquet", "hf-disk", "tfds")


@dataclasses.dataclass(frozen=True)
class IngestOptions:
    """Reader settings shared by `imagepipe run` and `imagepipe ingest`.

    No defaults here: they live in settings/config.py, whose flags of the
    same names fill them. The component passes each field as a typed
    ExecutionParameter (core/parameters.py).
    """

    format: str  # one of FORMATS
    strict: bool  # fail on any undecodable file instead of skipping it
    max_pixels: int  # images with more pixels are refused before decoding
    image_key: str  # TFRecord input: the feature with the encoded image
    label_key: str  # TFRecord input: the int64 feature with the 0-based label
    eval_percent: int  # share of images hashed into the eval split
    # A span pattern (components/image_example_gen/spans.py) trains on the
    # latest train_spans spans (0: all); the others are for single datasets.
    train_spans: int
    # --span: the span a run expects; the window ends there, and a run without it fails
    # (None: the newest ready span). Not named `span`: TFX's driver sets that exec
    # property to the span it resolved. A span is ready with a _SUCCESS file, or once no
    # file of it changed for span_quiet seconds (span_window.py).
    expected_span: Optional[int]
    span_quiet: int
    # Where each span's examples are kept between runs (span_store.py): a folder under
    # the pipeline root, the same for every run. KFP gives each run's artifacts their
    # own folder, so it cannot be derived from the artifact's URI there.
    span_store: str
    # Data health (components/image_example_gen/data_health/): drop copies before training; and a
    # CSV of path,group whose group each example carries (None: no groups).
    dedupe: bool
    groups: Optional[str]
    # Manifests (readers/manifests/): where the images they
    # name may be, beyond the manifest's own folder or bucket (comma-separated; None: only
    # there); the folder their relative paths start from (None: the manifest's); and a
    # headed CSV's columns (None: found by their usual names).
    allowed_root: Optional[str]
    image_folder: Optional[str]
    path_column: Optional[str]
    label_column: Optional[str]
    split_column: Optional[str]

    def __post_init__(self):
        problems = option_problems(self.format, self.eval_percent, self.max_pixels,
                                   self.train_spans, self.expected_span, self.span_quiet)
        if problems:
            name, rule = problems[0]  # named as the config's field: --span is expected_span
            value = getattr(self, "expected_span" if name == "span" else name)
            raise ValueError(f"{name} {rule}, got {value!r}")

    @property
    def buckets(self):
        """Cumulative hash buckets of the train/eval split, e.g. [80, 100]."""
        return [100 - self.eval_percent, 100]


def option_problems(format: str, eval_percent: int,  # noqa: A002 (the flag's name)
                    max_pixels: int, train_spans: int = 0, span: Optional[int] = None,
                    span_quiet: int = 0) -> List[Tuple[str, str]]:
    """(field, rule) for each value out of range: the one rule, which the config names as flags."""
    checks = [("format", format in FORMATS, f"must be one of {', '.join(FORMATS)}"),
              ("eval_percent", 0 < eval_percent < 100, "must be in 1..99"),
              ("max_pixels", max_pixels >= 1, "must be >= 1"),
              ("train_spans", train_spans >= 0, "must be >= 0 (0: every span)"),
              ("span", span is None or span >= 0, "must be >= 0"),
              ("span_quiet", span_quiet >= 0, "must be >= 0 (0: a span is ready at once)")]
    return [(name, rule) for name, ok, rule in checks if not ok]


def split_index(relpath: str, buckets: Sequence[int]) -> int:
    """Which split a file goes to, from a hash of its relative path alone.

    `buckets` are cumulative hash-bucket counts, e.g. [80, 100] for 80/20.
    The same path lands in the same split on every run, machine and listing
    order; adding files never moves existing ones between splits.
    """
    bucket = int(hashlib.sha256(relpath.encode("utf-8")).hexdigest(), 16) % buckets[-1]
    return bisect.bisect(buckets, bucket)
