"""The one settings convention: dataclasses as typed ExecutionParameters or custom_config."""
import dataclasses
import json
from typing import Optional, Tuple

import pytest

from core.parameters import (decode, encode, execution_parameters, from_custom_config,
                             to_custom_config)



@dataclasses.dataclass(frozen=True)
class Settings:
    name: str
    count: int
    share: float
    strict: bool
    sizes: Tuple[int, ...]
    folder: Optional[str]


def test_every_field_becomes_a_primitive_typed_parameter():
    params = execution_parameters(Settings)
    assert {k: (p.type, p.optional) for k, p in params.items()} == {
        "name": (str, False), "count": (int, False), "share": (float, False),
        "strict": (int, False), "sizes": (str, False), "folder": (str, True)}


def test_settings_round_trip_through_primitives():
    settings = Settings("a", 3, 0.5, True, (8, 32), None)
    props = encode(settings)
    assert props == {"name": "a", "count": 3, "share": 0.5, "strict": 1, "sizes": "8,32"}
    assert decode(Settings, props) == settings
    assert decode(Settings, {**props, "folder": "/x"}).folder == "/x"


def test_values_are_cast_back_to_their_field_types():
    # KFP's v2 entrypoint hands integers over as floats.
    settings = decode(Settings, {"name": "a", "count": 3.0, "share": 1, "strict": 1.0,
                                 "sizes": "8"})
    assert (settings.count, type(settings.count), settings.share, settings.strict) == \
        (3, int, 1.0, True)


def test_a_missing_required_parameter_is_named():
    with pytest.raises(KeyError, match="count"):
        decode(Settings, {"name": "a", "share": 0.5, "strict": 0, "sizes": ""})


def test_custom_config_round_trip_names_unknown_keys_and_reads_json():
    settings = Settings("a", 3, 0.5, False, (), "/f")
    config = to_custom_config("s", settings)
    assert from_custom_config(Settings, "s", config) == settings
    assert from_custom_config(Settings, "s", {"s": json.dumps(config["s"])}) == settings
    with pytest.raises(KeyError, match="unknown settings \\['typo'\\]"):
        from_custom_config(Settings, "s", {"s": {**config["s"], "typo": 1}})
    with pytest.raises(KeyError, match="no 's'"):
        from_custom_config(Settings, "s", {})
