"""docs/flags.md is generated from the settings and names every flag of every subcommand."""
import re

from cli import flag_reference
from cli.main import build_parser


def test_docs_flags_md_is_the_generated_reference():
    assert flag_reference.DOC.read_text(encoding="utf-8") == flag_reference.markdown(), (
        "docs/flags.md is stale: run `.venv/bin/python -m cli.flag_reference`")


def _subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")  # argparse: no public API
    return action.choices


def test_each_subcommand_has_a_section_naming_every_flag_it_takes():
    page = flag_reference.markdown()
    for name, parser in _subcommands().items():
        match = re.search(rf"^## imagepipe {name}\n(.*?)(?=^## |\Z)", page, re.S | re.M)
        assert match, f"no `## imagepipe {name}` section"
        flags = [s for a in parser._actions for s in a.option_strings if s.startswith("--")
                 and s not in ("--help",) and not s.startswith("--no-")]
        missing = [f for f in flags if f"`{f}`" not in match.group(1)]
        assert not missing, f"imagepipe {name}: {missing}"
