"""Flags come from the sections: a new setting in a section is a flag, a --config key and,
for drift, a parameter of the validator and of the compiled monitor, with nothing else
edited."""
import dataclasses

import pytest

from cli.main import build_parser
from components.drift_validator.settings import DriftSettings
from core.parameters import encode, flag_of
from kfp_compiler.monitor_pipeline import _fixed_flags
from settings import flags
from settings.config import PipelineConfig

DRIFT = [f.name for f in dataclasses.fields(DriftSettings)]


@pytest.mark.parametrize("name", DRIFT)
def test_each_drift_threshold_travels_from_its_one_field(name):
    flag = flag_of(DriftSettings, name)
    for command in ("run", "monitor", "compile"):
        extra = {"monitor": ["--data", "w"],
                 "compile": ["--target", "kubeflow", "--image", "i", "--pipeline-root", "r"]}
        args = build_parser().parse_args([command, *extra.get(command, []), flag, "0.42"])
        config, _ = flags.parse(args)
        assert getattr(config.drift, name) == 0.42, command
    config = PipelineConfig.from_values(**{flag[2:].replace("-", "_"): 0.42})
    assert encode(config.drift_settings())[name] == 0.42  # the validator's parameter
    fixed = _fixed_flags(config)
    assert fixed[fixed.index(flag) + 1] == "0.42"  # the compiled monitor's step


def test_a_subcommand_takes_whole_sections_and_nothing_else():
    parser = build_parser()
    for command, (sections, _) in flags.COMMANDS.items():
        sub = next(a for a in parser._actions if a.dest == "command").choices[command]
        dests = {a.dest.split(".")[0] for a in sub._actions if "." in a.dest}
        assert dests == set(sections), command
