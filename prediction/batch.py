"""`imagepipe predict --data`: classify a folder of images or TFRecords with Beam's RunInference.

    imagepipe predict --model outputs/serving/imagepipe --data photos/ --output preds.jsonl

DirectRunner by default; `--beam-args` picks another runner (Dataflow). See
docs/batch_prediction.md for the output format and the measured throughput.

Why not Beam's own handler (apache_beam.ml.inference.tensorflow_inference):
importing it imports tensorflow_hub 0.15, which imports
tf.compat.v1.estimator, removed from TensorFlow 2.16, so the import fails
here; it also feeds tensors, not the encoded bytes that the serving_image
signature takes. A small ModelHandler calls that signature instead.
"""
import os
import shutil
import sys
import tempfile
import time
import uuid
from typing import Iterable, List, Optional, Sequence, Tuple

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.ml.inference.base import KeyedModelHandler, ModelHandler, RunInference

from core.storage import files
from prediction import batch_io as io_
from prediction.batch_io import BATCH_PREDICT_MAX_BATCH, BatchJob
from core.errors import PipelineFailed

NAMESPACE = "imagepipe"
ERRORS = "errors"


class ServingImageHandler(ModelHandler):
    """A SavedModel's serving_image signature on batches of encoded images."""

    def __init__(self, model_path: str):
        super().__init__()
        self._path = model_path

    def load_model(self):
        import tensorflow as tf
        return tf.saved_model.load(self._path)

    def run_inference(self, batch: Sequence[bytes], model, inference_args=None) -> List:
        """Probabilities per image; an image the model's decoder refuses gets its reason."""
        import tensorflow as tf
        try:
            return list(_probabilities(model, batch))
        except tf.errors.InvalidArgumentError:
            # An image PIL accepts but TensorFlow's decoder does not (a PNG cut
            # just before its end chunk) fails the whole call: find it alone.
            return [_one(model, image) for image in batch]

    def get_num_bytes(self, batch: Sequence[bytes]) -> int:
        return sum(len(b) for b in batch)  # the default pickles the whole batch to count

    def batch_elements_kwargs(self) -> dict:
        return {"max_batch_size": BATCH_PREDICT_MAX_BATCH}


def _probabilities(model, batch: Sequence[bytes]):
    import tensorflow as tf

    from core.contract import IMAGE_BYTES_INPUT, PROBABILITIES, SERVING_IMAGE
    return model.signatures[SERVING_IMAGE](**{IMAGE_BYTES_INPUT: tf.constant(list(batch))})[
        PROBABILITIES].numpy()


def _one(model, image: bytes):
    """One image's probabilities, or why the model could not decode it."""
    import tensorflow as tf
    try:
        return _probabilities(model, [image])[0]
    except tf.errors.InvalidArgumentError as e:
        # The op's own line ("Invalid PNG data, size 300"), not the graph's trace.
        noise = ("Graph execution error", "Detected at node", "<stack traces", "[[")
        lines = [line.strip() for line in e.message.splitlines()]
        reason = next((line for line in lines if line and not line.startswith(noise)),
                      "refused")
        return f"cannot decode in the model: {reason}"


def _row(keyed: Tuple[str, object], labels: List[str], k: int) -> dict:
    key, result = keyed
    if isinstance(result, str):
        return io_.error_row(key, result)
    return io_.prediction_row(key, result, labels, k)


def _read_file(path: str):
    try:
        return io_.read_image(path)
    except OSError as e:
        return io_.error_row(path, str(e))


class _Check(beam.DoFn):
    """Bytes that ingestion would accept go on; the rest become error rows, so one
    corrupt file never fails a whole batch inside the model."""

    def process(self, item) -> Iterable:
        reason = item.get("error") if isinstance(item, dict) else io_.checked(item)
        if reason is None:
            yield item
        else:
            yield beam.pvalue.TaggedOutput(ERRORS, item if isinstance(item, dict)
                                           else io_.error_row(item[0], reason))


class _Progress(beam.DoFn):
    """Counts rows (Beam counters, read at the end) and prints a line every few seconds."""

    def __init__(self, every_s: float):
        self._every_s = every_s

    def setup(self):
        self._done = self._failed = 0
        self._first = self._last = None
        self._predicted = Metrics.counter(NAMESPACE, "predicted")
        self._errors = Metrics.counter(NAMESPACE, "failed")

    def process(self, row: dict) -> Iterable[dict]:
        now = time.monotonic()
        self._first = self._first or now
        self._last = self._last or now
        failed = "error" in row
        (self._errors if failed else self._predicted).inc()
        self._done, self._failed = self._done + 1, self._failed + failed
        if now - self._last >= self._every_s:
            self._last = now
            rate = self._done / max(now - self._first, 1e-9)
            print(f"predict   {self._done:,} images, {self._failed:,} failed, "
                  f"{rate:,.0f} images/s", file=sys.stderr, flush=True)
        yield row


def _is_remote(options) -> bool:
    from apache_beam.options.pipeline_options import StandardOptions
    runner = options.view_as(StandardOptions).runner
    return runner is not None and "direct" not in runner.lower()


def _items(pipeline, job: BatchJob):
    """The (id, bytes) items and error rows of the job's folder or TFRecord files."""
    if job.source == "tfrecord":  # Create spreads several files over workers
        return (pipeline | "Files" >> beam.Create(job.units)
                | "ReadRecords" >> beam.FlatMap(io_.iter_records, job.image_key))
    # Walked inside the pipeline: a generator, so the files are never all listed
    # at once. Remote runners get the paths reshuffled, else one worker would do
    # everything (fusion); locally that would hold every path in memory.
    paths = pipeline | "Root" >> beam.Create(job.units) | "List" >> beam.FlatMap(
        io_.iter_image_paths)
    if _is_remote(pipeline.options):
        paths = paths | "Spread" >> beam.Reshuffle()
    return paths | "Read" >> beam.Map(_read_file)


def build(pipeline, job: BatchJob, temp_output: str) -> None:
    """Adds read, check, RunInference and write to `pipeline`; rows go to `temp_output`."""
    checked = _items(pipeline, job) | "Check" >> beam.ParDo(_Check()).with_outputs(
        ERRORS, main="images")
    predicted = (checked.images
                 | "Infer" >> RunInference(KeyedModelHandler(ServingImageHandler(
                     job.model_path)))
                 | "Rows" >> beam.Map(_row, job.labels, job.top_k))
    _ = ((predicted, checked[ERRORS]) | beam.Flatten()
         | "Progress" >> beam.ParDo(_Progress(job.progress_s))
         | "Format" >> beam.Map(io_.format_row, job.kind)
         # Not num_shards=1: that groups every row on one key, which the
         # DirectRunner holds in memory until the end. Shards are written as
         # bundles stream by; run_batch_predict joins them into one file.
         | "Write" >> beam.io.WriteToText(temp_output))


def pipeline_options(beam_args: Sequence[str]):
    """PipelineOptions of `beam_args`, plus imagepipe's setup.py for remote runners,
    whose workers must install it to import this module."""
    from apache_beam.options.pipeline_options import PipelineOptions
    options = PipelineOptions(list(beam_args))
    if not _is_remote(options):
        return options
    from core.beam_deps import LOCAL_SETUP_FILE, with_setup_file
    return PipelineOptions(with_setup_file(beam_args, LOCAL_SETUP_FILE))


def _counts(result) -> Tuple[int, int]:
    """(predicted, failed) from the Beam counters."""
    found = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]
    total = {"predicted": 0, "failed": 0}
    for counter in found:
        total[counter.key.metric.name] += counter.committed
    return total["predicted"], total["failed"]


def _join_shards(prefix: str, header: Optional[str]) -> None:
    """Beam's shards PREFIX-SSSSS-of-NNNNN, in order, streamed into the one file PREFIX."""
    with files.open_file(prefix, "wb") as out:
        if header is not None:
            out.write(header.encode("utf-8") + b"\n")
        for shard in files.glob(f"{prefix}-*-of-*"):
            with files.open_file(shard, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
            files.remove(shard)


def _remove_partial(temp: str) -> None:
    """The temp file, its shards and Beam's beam-temp-* folder beside it, after a failure."""
    leftovers = files.glob(f"{temp}*") + files.glob(os.path.join(
        os.path.dirname(temp), f"beam-temp-{os.path.basename(temp)}-*"))
    for path in leftovers:
        (files.rmtree if files.isdir(path) else files.remove)(path)


def run_batch_predict(job: BatchJob, beam_args: Sequence[str]) -> Tuple[int, int]:
    """Writes one row per image of the job to its output; returns (predicted, failed).

    Rows go to hidden temp files beside the output, joined and renamed onto
    it only when the whole run succeeded, so a failed run never leaves a file
    that looks complete. A runner on this machine writing to an object store
    writes and joins locally instead, then uploads the one file.

    Raises:
      PipelineFailed: the Beam pipeline or the upload failed; nothing is left at the output.
    """
    options = pipeline_options(beam_args)
    if not files.is_remote(job.output) or _is_remote(options):
        # Dataflow's workers cannot reach this machine's disk: they write to the bucket.
        return _predict_into(job, options, job.output)
    # Beam's GcsIO (google-cloud-storage) retries neither an upload without a
    # generation precondition nor a batch rename or delete, so one transient
    # 503 would fail the run; TF's client, which uploads the file, retries both.
    # An object is visible only once its upload completes, so a reader never
    # sees part of it, and storage's retry starts a fresh upload.
    with tempfile.TemporaryDirectory(prefix="imagepipe-predict-") as local:
        joined = os.path.join(local, os.path.basename(job.output))
        counts = _predict_into(job, options, joined)
        try:
            files.copy(joined, job.output)
        except Exception as e:
            raise PipelineFailed("predict", e) from e
    return counts


def _predict_into(job: BatchJob, options, output: str) -> Tuple[int, int]:
    """Runs the job's pipeline with its rows joined into `output` (see run_batch_predict)."""
    temp = os.path.join(os.path.dirname(output),
                        f".{os.path.basename(output)}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with beam.Pipeline(options=options) as pipeline:
            build(pipeline, job, temp)
        _join_shards(temp, io_.csv_header() if job.kind == "csv" else None)
        files.rename(temp, output)
    except Exception as e:
        _remove_partial(temp)
        raise PipelineFailed("predict", e) from e
    return _counts(pipeline.result)
