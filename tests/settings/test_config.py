"""PipelineConfig: defaults, derived paths, and validation at construction."""
import pytest

from settings.config import DEFAULT_DATA, PLANNED, ConfigError, PipelineConfig


def test_defaults_point_at_the_bundled_digits():
    config = PipelineConfig.from_values()
    assert DEFAULT_DATA.endswith("data/mnist_1k/png")
    assert config.run.output == "outputs"
    # Left to the training plan (pipeline/planning/plan.py) unless given.
    assert all(config.flat()[name] is None for name in PLANNED)
    assert config.training.train_steps is None and config.training.eval_steps is None


def test_paths_derive_from_output_and_model_name():
    config = PipelineConfig.from_values(output="/o", model_name="digits")
    assert (config.pipeline_root, config.metadata_path, config.serving_dir,
            config.summary_path) == ("/o/tfx", "/o/metadata.sqlite", "/o/serving/digits",
                                     "/o/summary.json")


def test_invalid_values_fail_at_construction():
    with pytest.raises(ConfigError, match="--eval-steps must be >= 1, got 0"):
        PipelineConfig.from_values(eval_steps=0)
    with pytest.raises(ConfigError, match="--image-size"):
        PipelineConfig.from_values().replace(image_size=2)


def test_training_values_are_checked_at_construction_too():
    with pytest.raises(ConfigError, match="--steps-per-execution must be >= 1, got 0"):
        PipelineConfig.from_values(steps_per_execution=0)
    with pytest.raises(ConfigError, match="--augment-color must be in"):
        PipelineConfig.from_values(augment_color=1.5)
    with pytest.raises(ConfigError, match=r"--augment-rotate must be in \[0, 180\], got -5"):
        PipelineConfig.from_values(augment_rotate=-5.0)


def test_beam_args_split_like_a_shell():
    config = PipelineConfig.from_values(beam_args="--runner=DataflowRunner --labels='a b'")
    assert config.beam_pipeline_args == ["--runner=DataflowRunner", "--labels=a b"]


@pytest.mark.parametrize("value", [-0.1, float("inf"), float("nan")])
def test_drift_thresholds_must_be_finite_and_not_negative(value):
    with pytest.raises(ConfigError, match="--drift-size must be a finite number >= 0"):
        PipelineConfig.from_values(drift_size=value)
    with pytest.raises(ConfigError, match="--train-spans must be >= 0"):
        PipelineConfig.from_values(train_spans=-1)


def test_span_flags_are_checked_at_construction():
    ingest = PipelineConfig.from_values().ingest
    assert ingest.span is None and ingest.span_quiet == 600
    with pytest.raises(ConfigError, match="--span needs a {SPAN} pattern in --data"):
        PipelineConfig.from_values(data="/data/photos", span=3)
    with pytest.raises(ConfigError, match="--span must be >= 0, got -1"):
        PipelineConfig.from_values(data="/data/span-{SPAN}", span=-1)
    with pytest.raises(ConfigError, match="--span-quiet must be >= 0"):
        PipelineConfig.from_values(span_quiet=-5)
    options = PipelineConfig.from_values(
    data="/data/span-{SPAN}",
    span=3,
     span_quiet=0).ingest_options()
    assert (options.expected_span, options.span_quiet) == (3, 0)
