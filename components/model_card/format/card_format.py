"""The model card's format: the schema it is checked against, and the Pusher's stamp.

The schema (model_card.schema.json beside this file) is vendored from
model-card-toolkit 2.0.0, Copyright 2019 The TensorFlow Authors, Apache
License 2.0; the toolkit itself does not install on this stack
(docs/model_card.md). The ModelCardGenerator builds a card
(components/model_card/); the Pusher stamps it with the version it publishes.
"""
import datetime
import json
import os
import sys

SCHEMA_FILE = os.path.join(os.path.dirname(__file__), "model_card.schema.json")
SCHEMA_VERSION = "0.0.2"


def stamp_card(card: dict, version: int, pushed_at: float, path: str) -> dict:
    """`card` as pushed: version `version` at `path`, pushed at `pushed_at` (Unix time)."""
    when = datetime.datetime.fromtimestamp(pushed_at, datetime.timezone.utc)
    details = dict(card["model_details"])
    details["documentation"] = (
        f"Version {version} of {details['name']}, pushed at "
        f"{when.isoformat(timespec='seconds')} (Unix {pushed_at:.0f}). "
        + details["documentation"])
    details.update(version={"name": str(version), "date": when.date().isoformat()}, path=path)
    return {**card, "model_details": details}


def validate(card: dict) -> None:
    """Raises jsonschema.ValidationError if `card` does not fit the vendored schema."""
    jsonschema = _jsonschema()
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        jsonschema.validate(card, json.load(f),
                            format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def _jsonschema():
    """jsonschema, imported without rfc3987_syntax when this process has not imported it yet.

    jsonschema's format module imports rfc3987_syntax whenever it is installed
    (Jupyter's extras install it), and that module compiles a Lark grammar at
    import: most of the model card step's time on a small run, for the "iri"
    format, which the card's schema never uses ("date" and "uri" only). The
    block is lifted right after, so later imports of rfc3987_syntax work.
    """
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import jsonschema
        return jsonschema
    sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError
    try:
        import jsonschema
    finally:
        sys.modules.pop("rfc3987_syntax", None)
    return jsonschema
