"""data_facts: what the plan knows of a dataset before ingestion, and what it cannot."""
import shutil

from components.image_example_gen.readers.formats import list_dataset
from settings.config import PipelineConfig
from pipeline.planning.data_facts import data_facts
from pipeline.planning.plan import make_plan

OPTIONS = PipelineConfig.from_values().ingest_options()


def _facts(root):
    return data_facts(str(root), list_dataset(str(root), OPTIONS), OPTIONS)


def _epochs_reason(root, facts) -> str:
    return make_plan(PipelineConfig.from_values(data=str(root)),
                     facts, "cpu", 8 << 30).reasons["epochs"]


def test_a_hashed_split_is_counted_by_path_and_the_plan_says_copies_may_move(mnist_subset):
    # A copy under another name is hashed on its own path here; ingestion later moves it
    # to its original's split, which the plan cannot know without decoding every image.
    original = next((mnist_subset / "3").iterdir())
    shutil.copy(original, mnist_subset / "3" / "copy_of_it.png")
    facts = _facts(mnist_subset)
    assert facts.hashed_split and facts.train_examples + facts.eval_examples == 101
    reason = _epochs_reason(mnist_subset, facts)
    assert "by path hash (ingestion then moves copies to their group's split)" in reason


def test_given_splits_are_exact_and_the_plan_claims_nothing_more(mnist_subset, tmp_path):
    root = tmp_path / "presplit"
    for digit in sorted(mnist_subset.iterdir()):
        for i, png in enumerate(sorted(digit.iterdir())):
            split = "train" if i < 7 else "eval"
            (root / split / digit.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(png, root / split / digit.name / png.name)
    facts = _facts(root)
    assert not facts.hashed_split
    assert (facts.train_examples, facts.eval_examples) == (70, 30)
    assert _epochs_reason(root, facts).startswith("70 train images: about")
