"""One parameter convention for imagepipe's components: a frozen dataclass of settings.

Each component declares its settings as a dataclass with no defaults (they
live in pipeline/config.py alone); its ComponentSpec gets one typed
ExecutionParameter per field, and its executor reads the dataclass back from
the exec properties. Every value is one of TFX's primitive types (int,
float, str): a bool travels as 0/1 (TFX's own convention, e.g. SchemaGen's
infer_feature_shape), a tuple of ints as "8,32", and None as an absent
optional parameter. The reader casts each value back to its field's type:
KFP's v2 entrypoint hands integer parameters over as floats (20.0).
"""
import dataclasses
import typing
from typing import Any, Dict, Type, TypeVar

from tfx.types.component_spec import ExecutionParameter

T = TypeVar("T")


def _base_type(hint) -> tuple:
    """(the field's base type, whether it may be None)."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Union and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return hint, False


def _wire_type(base) -> type:
    """The primitive type a field travels as."""
    if base is bool:
        return int
    if typing.get_origin(base) is tuple:
        return str
    if base in (int, float, str):
        return base
    raise TypeError(f"unsupported settings field type {base!r}")


def execution_parameters(settings: Type) -> Dict[str, ExecutionParameter]:
    """A ComponentSpec's PARAMETERS for the fields of a settings dataclass."""
    hints = typing.get_type_hints(settings)
    params = {}
    for field in dataclasses.fields(settings):
        base, optional = _base_type(hints[field.name])
        params[field.name] = ExecutionParameter(type=_wire_type(base), optional=optional)
    return params


def to_exec_properties(settings: Any) -> Dict[str, Any]:
    """The settings as exec property values; None-valued fields are left out."""
    values = {}
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if value is None:
            continue
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, tuple):
            value = ",".join(str(v) for v in value)
        values[field.name] = value
    return values


def from_exec_properties(settings: Type[T], exec_properties: Dict[str, Any]) -> T:
    """The inverse of to_exec_properties; a required field that is absent raises KeyError."""
    hints = typing.get_type_hints(settings)
    values = {}
    for field in dataclasses.fields(settings):
        base, optional = _base_type(hints[field.name])
        value = exec_properties.get(field.name)
        if value is None:
            if not optional:
                raise KeyError(f"{settings.__name__}: exec property {field.name!r} is missing")
        elif base is bool:
            value = bool(int(value))
        elif typing.get_origin(base) is tuple:
            value = tuple(int(v) for v in str(value).split(",") if v)
        else:
            value = base(value)
        values[field.name] = value
    return settings(**values)
