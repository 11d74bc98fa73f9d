"""--config files: default < file < flag, and bad files exit 2 naming the file and setting."""
import pytest

from cli import main as cli
from settings import flags
from settings.config import SECTIONS, ConfigError, PipelineConfig
from settings.config_file import load_config_file, to_yaml


def _config(*argv):
    return flags.parse(cli.build_parser().parse_args(list(argv)))[0]


@pytest.mark.parametrize("name, text", [
    ("c.yaml", "train_steps: 50\nbatch-size: 32\nquantize: none\n"),
    ("c.toml", "train_steps = 50\nbatch-size = 32\nquantize = \"none\"\n"),
])
def test_precedence_is_default_then_file_then_flag(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    config = _config("run", "--config", str(path), "--train-steps", "70")
    assert config.training.train_steps == 70  # flag beats file
    assert (
    config.training.batch_size,
    config.tflite.quantize) == (
        32,
         "none")  # file beats default
    assert config.training.learning_rate == PipelineConfig.from_values(
    ).training.learning_rate  # default otherwise


def test_config_show_output_is_itself_a_config_file(tmp_path):
    shown = tmp_path / "shown.yaml"
    config = PipelineConfig.from_values(train_steps=9, tpu="local", image_size=64,
                                        augment_color=0.2,
                                        strict=True, learning_rate=1, quantize="float16",
                                        beam_args="--direct_num_workers=2 --runner=DirectRunner")
    shown.write_text(to_yaml(config))
    assert PipelineConfig.from_values(**load_config_file(str(shown))) == config


@pytest.mark.parametrize("text, words", [
    ("train_stepz: 5\n", "unknown setting 'train_stepz'"),
    ("train_steps: many\n", "train_steps must be int, got 'many'"),
    ("strict: 1\n", "strict must be bool"),
    ("quantize: int4\n", "quantize must be one of none, dynamic, float16, int8"),
    ("- a\n- b\n", "key: value pairs"),
    ("a: [\n", "not valid YAML"),
])
def test_bad_files_name_the_file_and_the_setting(tmp_path, text, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="--config .*bad.yaml") as error:
        load_config_file(str(path))
    assert words in str(error.value)


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config_file(str(tmp_path / "nope.yaml"))
    (tmp_path / "c.json").write_text("{}")
    with pytest.raises(ConfigError, match="use a .yaml, .yml or .toml"):
        load_config_file(str(tmp_path / "c.json"))


def test_every_flag_has_a_default_and_an_example():
    import dataclasses
    for section in SECTIONS.values():
        for field in dataclasses.fields(section):
            assert "Example: --" in flags.help_text(field), field.name
            assert flags.default_text(field), field.name


def test_every_subcommand_has_help_with_an_example():
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    assert set(commands) >= {"run", "ingest", "compile", "config", "report", "runs", "predict"}
    for name, parser in commands.items():
        assert "Example:" in parser.format_help().replace("\n", " "), name
