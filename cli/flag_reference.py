"""docs/flags.md, generated from the settings sections: the flag reference is never a copy.

    .venv/bin/python -m cli.flag_reference      # rewrites docs/flags.md

One section per subcommand, `## imagepipe <command>`, naming every flag it takes: a settings
section's table the first time a subcommand takes it, its flags by name after that.
tests/cli/test_flag_reference.py fails when docs/flags.md is stale.
"""
import dataclasses
import sys

from core.parameters import flag_of
from settings.config import REPO_ROOT
from settings.flags import COMMANDS, default_text, help_text, section_class

DOC = REPO_ROOT / "docs" / "flags.md"
_HEADER = """# `imagepipe` flags

Generated from the settings sections (`settings/sections.py`,
`settings/command_sections.py`, and the stages' own `components/*/settings.py`) by
`python -m cli.flag_reference`; do not edit by hand. `imagepipe COMMAND --help` prints the
same. A subcommand takes whole sections; each
section's flags are described where a subcommand first takes it. Every flag of the
pipeline's sections can also be set in a `--config` YAML or TOML file, by flag name or
nested by section as `imagepipe config show` prints it; a flag given wins over the file,
and the file over the defaults. "planned" means the run chooses it from the data and the
machine, and says why (`imagepipe plan --data DIR`).
"""


def _flag(kind: type, field: dataclasses.Field) -> str:
    if field.metadata.get("positional"):
        return field.metadata.get("metavar") or field.name.upper()
    return "`, `".join([flag_of(kind, field.name), *field.metadata.get("aliases", ())])


def _row(kind: type, field: dataclasses.Field) -> str:
    text = help_text(field).replace("|", "\\|")
    choices = field.metadata.get("choices")
    if choices:
        text += f" Choices: {', '.join(str(c) for c in choices)}."
    default = default_text(field)
    shown = default if default in ("planned", "required") else (
        "none" if field.default is None else f"`{default}`")
    return f"| `{_flag(kind, field)}` | {shown} | {text} |"


def _command(name: str, described: dict) -> str:
    sections, with_file = COMMANDS[name]
    lines = [f"## imagepipe {name}", ""]
    for section in sections:
        kind = section_class(section)
        fields = dataclasses.fields(kind)
        names = ", ".join(f"`{_flag(kind, f)}`" for f in fields)
        if section in described:
            lines += [f"- `{section}`: {names} (as in `imagepipe {described[section]}`)"]
            continue
        described[section] = name
        lines += ["", f"### `{section}`: {kind.__doc__.strip().splitlines()[0]}", "",
                  "| flag | default | what it does |", "| --- | --- | --- |",
                  *(_row(kind, f) for f in fields), ""]
    if with_file:
        lines += ["- `--config`: settings from a YAML or TOML file, FILE (above)"]
    return "\n".join(lines).replace("\n\n\n", "\n\n")


def markdown() -> str:
    """The whole page."""
    described: dict = {}
    return _HEADER + "".join("\n" + _command(name, described) + "\n" for name in COMMANDS)


def main() -> int:
    """Rewrites docs/flags.md."""
    DOC.write_text(markdown(), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
