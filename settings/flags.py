"""Every subcommand's flags, generated from the settings sections it takes.

A subcommand takes whole sections (COMMANDS), never a hand-picked list of fields: its flags
are those sections' fields, with the help, default, choices and bounds their `setting`
declares. `parse` turns the parsed arguments back into the config (the pipeline's sections,
with the --config file under the flags) and the command's own sections.
"""
import argparse
import dataclasses
import typing
from typing import Any, Dict, Tuple

from core.parameters import base_type, flag_of
from settings.config import FLAT_OF, REPO_ROOT, SECTIONS, PipelineConfig, construct
from settings.config_file import load_config_file
from settings.command_sections import (CompileSettings, ListingSettings, MonitorSettings,
                                       PredictSettings, RetentionSettings, RollbackSettings,
                                       ShowSettings, WindowSettings)

PIPELINE = tuple(SECTIONS)
_DATA = ("ingest", "images", "tfrecord")
# Subcommand: (the sections it takes, whether it takes --config).
COMMANDS = {
    "run": (PIPELINE, True),
    "ingest": (_DATA + ("run", "beam", "logging"), True),
    "inspect": (_DATA + ("beam", "logging", "listing"), True),
    "config": (("show",) + PIPELINE, True),
    "plan": (PIPELINE, True),
    "compile": (PIPELINE + ("compile",), True),
    "runs": (("run", "logging"), False),
    "report": (("run", "logging"), False),
    "versions": (("run", "logging", "listing"), False),
    "rollback": (("run", "logging", "rollback"), False),
    "gc": (("run", "logging", "retention"), False),
    "predict": (("predict", "images", "tfrecord", "beam", "logging"), False),
    "monitor": (("window", "run", "images", "drift", "monitor", "logging"), False),
}


@dataclasses.dataclass(frozen=True)
class Own:
    """A subcommand's own sections; None where the subcommand does not take one."""
    show: ShowSettings = None
    compile: CompileSettings = None
    predict: PredictSettings = None
    window: WindowSettings = None
    monitor: MonitorSettings = None
    listing: ListingSettings = None
    rollback: RollbackSettings = None
    retention: RetentionSettings = None


# The subcommands' own sections (not part of a run's config), by name: Own's fields.
OWN_SECTIONS = {field.name: field.type for field in dataclasses.fields(Own)}


def section_class(name: str) -> type:
    return SECTIONS.get(name) or OWN_SECTIONS[name]


def _base(kind: type, name: str):
    """The field's type, unwrapping Optional."""
    return base_type(typing.get_type_hints(kind)[name])[0]


def default_text(field: dataclasses.Field) -> str:
    """What the help and docs/flags.md show as the default."""
    if field.metadata.get("planned") and field.default is None:
        return "planned"
    if field.metadata.get("required"):
        return "required"
    default = str(field.default)
    if default.startswith(str(REPO_ROOT)):  # the same page in every clone
        default = default[len(str(REPO_ROOT)) + 1:]
    return default


def help_text(field: dataclasses.Field) -> str:
    """A flag's help: what it does and an example, without its default."""
    text = field.metadata["help"]
    example = field.metadata.get("example")
    if example and "Example:" not in text:
        text += f" Example: {example}"
    return text


def _add(parser: argparse.ArgumentParser, section: str, field: dataclasses.Field) -> None:
    kind, meta = section_class(section), field.metadata
    dest, base = f"{section}.{field.name}", _base(kind, field.name)
    shown = f"{help_text(field)} (default: {default_text(field)})"
    if meta.get("positional"):
        tuple_ = typing.get_origin(base) is tuple
        parser.add_argument(dest, nargs="*" if tuple_ else None, help=help_text(field),
                            metavar=meta.get("metavar") or field.name.upper(),
                            choices=meta.get("choices") or None)
        return
    flag = [flag_of(kind, field.name), *meta.get("aliases", ())]
    if base is bool:
        # A planned switch (default None) can be turned off as well as on.
        action = argparse.BooleanOptionalAction if field.default is None else "store_true"
        parser.add_argument(*flag, dest=dest, action=action, default=None, help=shown)
        return
    parser.add_argument(*flag, dest=dest, type=base, default=None, help=shown,
                        required=bool(meta.get("required")),
                        choices=meta.get("choices") or None,
                        metavar=meta.get("metavar") or field.name.upper())


def add_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """The subcommand's flags: one per field of each section it takes."""
    sections, with_file = COMMANDS[command]
    for section in sections:
        for field in dataclasses.fields(section_class(section)):
            _add(parser, section, field)
    if with_file:
        parser.add_argument("--config", default=None, metavar="FILE",
                            help="YAML or TOML file of settings (same names as the flags, or "
                                 "nested by section as `imagepipe config show` prints them); "
                                 "flags override it. Example: --config flowers.yaml")


def _given(args: argparse.Namespace) -> Dict[Tuple[str, str], Any]:
    """{(section, field): value} of every flag given."""
    out = {}
    for dest, value in vars(args).items():
        if "." in dest and value is not None:
            section, field = dest.split(".", 1)
            out[(section, field)] = tuple(value) if isinstance(value, list) else value
    return out


def parse(args: argparse.Namespace) -> Tuple[PipelineConfig, Own]:
    """The config (defaults < --config file < flags) and the command's own sections."""
    from_file = load_config_file(args.config) if getattr(args, "config", None) else {}
    given = _given(args)
    names = {FLAT_OF[key]: value for key, value in given.items() if key in FLAT_OF}
    config = PipelineConfig.from_values(**{**from_file, **names})
    sections, _ = COMMANDS[args.command]
    own = {}
    for section in sections:
        if section in OWN_SECTIONS:
            values = {f: v for (s, f), v in given.items() if s == section}
            own[section] = construct(OWN_SECTIONS[section], values)
    return config, Own(**own)
