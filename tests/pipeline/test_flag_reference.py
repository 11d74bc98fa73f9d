"""docs/flags.md is generated from the config and must be in sync with it."""
from pipeline import flag_reference
from pipeline.config import config_fields


def test_docs_flags_md_is_the_generated_reference():
    assert flag_reference.DOC.read_text(encoding="utf-8") == flag_reference.markdown(), (
        "docs/flags.md is stale: run `.venv/bin/python -m pipeline.flag_reference`")


def test_every_config_field_has_a_row():
    page = flag_reference.markdown()
    assert all(f"`--{f.name.replace('_', '-')}`" in page for f in config_fields())
