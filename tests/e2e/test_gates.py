"""A run whose accuracy without leaked eval images equals --accuracy-threshold exactly is
blessed, and one right answer short of it is not: the gates' rule, through the pipeline.

The data is pre-split: 200 fresh eval digits, so that k of them is a short decimal
(k/200), and 10 eval copies of train digits, which the Evaluator leaves out of the figure
it judges. The first run learns k; the next two change only the threshold, so the
Trainer is cached and the same model is judged at k/200 and at (k+1)/200.
"""
import shutil
from decimal import Decimal
from fractions import Fraction

import pytest

from tests.support.cli import run_pipeline
from tests.support.digits import make_span
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.slow
TRAIN_PER_CLASS, EVAL_PER_CLASS = 30, 20


def _run(data, output, threshold: str) -> dict:
    summary, _ = run_pipeline(
        data, output,
        # Enough steps for the cnn to learn its train digits, so their leaked copies are
        # right and the overall accuracy (which TFMA holds to the threshold) is the higher.
        "--train-steps", "150", "--accuracy-threshold", threshold, "--quantize", "none")
    return summary


@pytest.fixture(scope="module")
def presplit(tmp_path_factory):
    """train/<class>/ and eval/<class>/ folders; one train digit per class copied to eval."""
    root = tmp_path_factory.mktemp("gates") / "data"
    make_span(root / "train", take=slice(0, TRAIN_PER_CLASS), ready=False)
    make_span(root / "eval", take=slice(TRAIN_PER_CLASS, TRAIN_PER_CLASS + EVAL_PER_CLASS),
              ready=False)
    for label in sorted(p.name for p in MNIST_PNG.iterdir()):
        first = sorted((MNIST_PNG / label).iterdir())[0]
        shutil.copy(first, root / "eval" / label / "leak.png")
    return root


def test_a_leak_free_accuracy_equal_to_the_threshold_is_blessed(presplit, tmp_path):
    output = tmp_path / "out"
    first = _run(presplit, output, "0")["eval"]
    assert first["leaked"] == 10 and first["blessed"]
    fresh = 10 * EVAL_PER_CLASS
    right = round(first["accuracy_without_leaked"] * fresh)
    assert 0 < right < fresh and first["accuracy"] >= (right + 1) / fresh, first
    at_threshold = str(Decimal(right) / Decimal(fresh))  # k/200 is a short decimal
    assert Fraction(Decimal(at_threshold)) == Fraction(right, fresh)

    judged = _run(presplit, output, at_threshold)
    assert judged["cached"] and "Trainer" in judged["cached"]  # the same model
    assert judged["eval"]["blessed"], judged["eval"]["reason"]
    assert judged["eval"]["accuracy_without_leaked"] == first["accuracy_without_leaked"]

    above = str(Decimal(right + 1) / Decimal(fresh))
    refused = _run(presplit, output, above)["eval"]
    assert not refused["blessed"]
    assert f"--accuracy-threshold {above}" in refused["reason"], refused["reason"]
    assert "copy in train" in refused["reason"]
