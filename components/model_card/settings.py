"""CardSettings: what ModelCardGenerator is told, one typed ExecutionParameter per field."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class CardSettings:
    """The card's model name and the drift rule it reports; no defaults (settings/config.py)."""

    model_name: str  # the served model's name (the push destination's folder)
    allow_drift: bool  # whether a drifted newest span is pushed anyway (--allow-drift)
