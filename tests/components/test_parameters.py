"""The one parameter convention: settings dataclasses as typed ExecutionParameters."""
import dataclasses
from typing import Optional, Tuple

import pytest

from components.parameters import execution_parameters, from_exec_properties, to_exec_properties


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


def test_settings_round_trip_through_exec_properties():
    settings = Settings("a", 3, 0.5, True, (8, 32), None)
    props = to_exec_properties(settings)
    assert props == {"name": "a", "count": 3, "share": 0.5, "strict": 1, "sizes": "8,32"}
    assert from_exec_properties(Settings, props) == settings
    assert from_exec_properties(Settings, {**props, "folder": "/x"}).folder == "/x"


def test_a_missing_required_parameter_is_named():
    with pytest.raises(KeyError, match="count"):
        from_exec_properties(Settings, {"name": "a", "share": 0.5, "strict": 0, "sizes": ""})
