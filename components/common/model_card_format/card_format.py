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
    import jsonschema
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        jsonschema.validate(card, json.load(f),
                            format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
