"""docs/flags.md, generated from the config's fields: the flag reference is never a copy.

    .venv/bin/python -m pipeline.flag_reference      # rewrites docs/flags.md

tests/pipeline/test_flag_reference.py fails when docs/flags.md is stale.
"""
import sys

from pipeline.config import REPO_ROOT, PLANNED, config_fields, flag_help

DOC = REPO_ROOT / "docs" / "flags.md"
_HEADER = """# `imagepipe run` flags

Generated from `pipeline/config.py` by `python -m pipeline.flag_reference`; do
not edit by hand. `imagepipe run --help` prints the same. Every flag can also
be set in a `--config` YAML file (docs/training.md); a flag given wins over the
file, and the file over the defaults. "planned" means the run chooses it from
the data and the machine, and says why (`imagepipe plan --data DIR`).

| flag | default | what it does |
| --- | --- | --- |
"""


def _default(field) -> str:
    if field.default is None:
        return "planned" if field.name in PLANNED else "none"
    default = str(field.default)
    if default.startswith(str(REPO_ROOT)):  # the same page in every clone
        default = default[len(str(REPO_ROOT)) + 1:]
    return f"`{default}`"


def markdown() -> str:
    """The whole page."""
    rows = []
    for field in config_fields():
        text = flag_help(field).rsplit(" (default: ", 1)[0].replace("|", "\\|")
        choices = field.metadata.get("choices")
        if choices:
            text += f" Choices: {', '.join(str(c) for c in choices)}."
        rows.append(f"| `--{field.name.replace('_', '-')}` | {_default(field)} | {text} |")
    return _HEADER + "\n".join(rows) + "\n"


def main() -> int:
    """Rewrites docs/flags.md."""
    DOC.write_text(markdown(), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
