"""The CLI: flags from the one config, and clear exit-2 errors before anything runs."""
import json

import pytest

from cli import main as cli
from settings import flags
from settings.config import FLAT, PipelineConfig
from tests.support.cli import imagepipe
from tests.support.images import copy_images


def test_every_config_field_has_a_flag_with_help():
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    for name in FLAT:
        assert "--" + name.replace("_", "-") in help_text
    assert "(default: planned)" in help_text and "--no-augment-flip" in help_text


def test_beam_args_flag_takes_a_value_that_starts_with_dashes():
    args = cli.build_parser().parse_args(
        ["ingest", "--beam-args=--direct_running_mode=multi_processing --direct_num_workers=2"])
    assert flags.parse(args)[0].beam_pipeline_args == [
        "--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def test_flags_override_defaults_and_unset_flags_keep_them():
    args = cli.build_parser().parse_args(["run", "--train-steps", "7", "--channels", "3",
                                          "--verbose"])
    config = flags.parse(args)[0]
    assert (
    config.training.train_steps,
    config.model.channels,
    config.logging.verbose) == (
        7,
        3,
         True)
    assert config.training.batch_size == PipelineConfig.from_values().training.batch_size


def _imagepipe(*args):
    """Runs the installed console script, as a user would."""
    return imagepipe(*args, timeout=120)


def _assert_one_line_error(result, *words):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for word in words:
        assert word in result.stderr


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_missing_data_exits_2_naming_the_path(tmp_path):
    missing = tmp_path / "nope"
    result = _imagepipe("run", "--data", str(missing), "--output", str(tmp_path / "out"))
    _assert_one_line_error(result, "--data", str(missing), "no such file")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_data_without_images_exits_2(tmp_path):
    (tmp_path / "data" / "cats").mkdir(parents=True)
    (tmp_path / "data" / "cats" / "readme.txt").write_text("no images here")
    result = _imagepipe("run", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "o"))
    _assert_one_line_error(result, "--data", "found no images")


def test_unwritable_output_exits_2(tmp_path, mnist_subset):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")  # a file where a directory must go: fails even as root
    result = _imagepipe("run", "--data", str(mnist_subset), "--output", str(blocker / "out"))
    _assert_one_line_error(result, "--output", "not writable")


@pytest.mark.parametrize("flag", [["--train-steps", "many"], ["--no-such-flag"],
                                  ["--channels", "2"]])
def test_bad_flags_exit_2_naming_the_flag(flag):
    result = _imagepipe("run", *flag)
    _assert_one_line_error(result, "error:", flag[0])


@pytest.mark.slow
def test_pipeline_failure_exits_1_naming_the_component(tmp_path, make_image):
    good = make_image(tmp_path / "big.jpg", size=(64, 64), fmt="JPEG").read_bytes()
    for label in ("a", "b"):
        (tmp_path / "data" / label).mkdir(parents=True)
        for i in range(4):  # headers intact, pixel data cut: only a full decode notices
            (tmp_path / "data" / label / f"{i}.jpg").write_bytes(good[: len(good) // 3])
    result = _imagepipe("run", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "o"))
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("imagepipe: pipeline failed in ImageExampleGen: ValueError:")
    assert "8 skipped" in last and "--verbose" in last


@pytest.mark.parametrize("flag, value", [("--train-steps", "0"), ("--batch-size", "-8"),
                                         ("--eval-percent", "100"),
                                         ("--accuracy-threshold", "1.5"),
                                         ("--time-budget", "0"), ("--time-budget", "abc")])
def test_out_of_range_values_exit_2_naming_the_flag(flag, value):
    result = _imagepipe("run", flag, value)
    _assert_one_line_error(result, f"imagepipe: error: {flag} must be", f"got {value}")


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_a_time_budget_the_other_stages_would_use_up_exits_2_before_anything_runs(tmp_path):
    result = _imagepipe("run", "--time-budget", "20s", "--output", str(tmp_path / "out"))
    _assert_one_line_error(result, "--time-budget 20s", "give at least")
    assert not (tmp_path / "out" / "tfx").exists()


COMPILE = ["compile", "--target", "kubeflow", "--image", "example.com/imagepipe:1",
           "--pipeline-root", "gs://b/root"]


@pytest.mark.parametrize("extra, words", [
    (["--data", "gs://b/data", "--accelerator", "tpu:v5e"], ["--accelerator tpu:v5e"]),
    (["--data", "gs://b/data"], ["--data gs://b/data", "--image-size and --channels"]),
    (["--data", "gs://b/d", "--image-size", "8", "--channels", "1", "--dataflow-project", "p"],
     ["--dataflow-project, --dataflow-region and --dataflow-temp-location"]),
    (["--data", "gs://b/d", "--image-size", "8", "--channels", "1", "--pipeline-name", "My_Pipe"],
     ["--pipeline-name 'My_Pipe'", "lowercase"]),
    (["--data", "gs://b/d", "--image-size", "32", "--channels", "3", "--model", "resnet50",
      "--weights", __file__], ["--weights", "a local file", "gs://"]),
    (["--data", "gs://b/d", "--image-size", "8", "--channels", "1", "--workers", "2",
      "--target", "vertex"],
     ["--workers 2 with --target vertex", "--vertex-project and --vertex-region"]),
])
@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_compile_refuses_what_a_cluster_could_not_run(extra, words):
    _assert_one_line_error(_imagepipe(*COMPILE, *extra), *words)


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_compile_writes_the_spec_and_says_where(tmp_path):
    out = tmp_path / "spec.yaml"
    result = _imagepipe(*COMPILE, "--data", "gs://b/d", "--image-size", "8", "--channels", "1",
                        "--dataflow-project", "p", "--dataflow-region", "europe-west4",
                        "--dataflow-temp-location", "gs://b/tmp", "--output-file", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == (f"compiled imagepipe for kubeflow: 13 steps, "
                                     f"schema 2.1.0 -> {out}")
    text = out.read_text()
    for arg in ("--runner=DataflowRunner", "--project=p", "--region=europe-west4",
                "--temp_location=gs://b/tmp", "--sdk_container_image=example.com/imagepipe:1"):
        assert f"- {arg}\n" in text
    assert "--direct_running_mode" not in text


@pytest.fixture
def predict_folder(tmp_path, exported_model):
    """Three of the exported model's source images and one file that is not an image."""
    return copy_images(exported_model.images[:3], tmp_path / "images")


@pytest.mark.parametrize("args, words", [
    (["--data", "{folder}", "--output", "{tmp}/p.txt"], ["--output", "must end in .jsonl"]),
    (["--data", "{tmp}/missing", "--output", "{tmp}/p.csv"], ["--data", "no such file"]),
    (["--data", "{folder}", "{folder}/0.png", "--output", "{tmp}/p.csv"], ["exclusive"]),
    (["--data", "{folder}"], ["--data needs --output"]),
    (["--output", "{tmp}/p.csv", "{folder}/0.png"], ["IMAGE...", "--data DATA --output"]),
    (["--data", "{folder}", "--output", "{folder}/0.png/p.csv"], ["--output", "not writable"]),
])
@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_predict_data_usage_errors_exit_2_naming_the_flag(tmp_path, exported_model,
                                                          predict_folder, args, words):
    args = [a.format(folder=predict_folder, tmp=tmp_path) for a in args]
    result = _imagepipe("predict", "--model", exported_model.model_dir, *args)
    _assert_one_line_error(result, *words)
    assert not list(tmp_path.glob("p.*"))


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_predict_data_writes_every_row_and_exits_2_if_any_image_failed(tmp_path,
                                                                       exported_model,
                                                                       predict_folder):
    output = tmp_path / "predictions.jsonl"
    ok = _imagepipe("predict", "--model", exported_model.model_dir, "--data",
                    str(predict_folder), "--output", str(output))
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert ok.stdout.strip() == f"predicted 3 images, 0 failed -> {output}"
    (predict_folder / "bad.png").write_text("not an image")
    bad = _imagepipe("predict", "--model", exported_model.model_dir, "--data",
                     str(predict_folder), "--output", str(output))
    _assert_one_line_error(bad, "1 of 4 image(s) could not be read or decoded", str(output))
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert sorted("error" in row for row in rows) == [False, False, False, True]


@pytest.mark.integration  # starts imagepipe in a subprocess: seconds
def test_predict_image_files_still_prints_a_line_per_image(exported_model, predict_folder):
    result = _imagepipe("predict", "--model", exported_model.model_dir, "--top-k", "1",
                        str(predict_folder / "0.png"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith(f"{predict_folder / '0.png'}: c")
