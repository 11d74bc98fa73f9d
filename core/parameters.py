"""One typed convention for every stage's settings: a frozen dataclass, sent as primitives.

Each stage declares its settings as a dataclass. Where the user sets all of it, the
dataclass is the config's section and holds its defaults and help through `setting`
(below; settings/README.md says where each default lives). The same two functions carry
any such dataclass over every hop TFX offers:

- a custom component: one typed ExecutionParameter per field
  (`execution_parameters`), the values from `encode`, read back by `decode`;
- a stock component's `custom_config` (Trainer, Transform): `encode` under one
  key (`to_custom_config`), read back by `from_custom_config`.

Every value travels as one of TFX's primitive types (int, float, str): a bool
as 0/1 (TFX's own convention, e.g. SchemaGen's infer_feature_shape), a tuple
of ints as "8,32", and None by leaving the key out. `decode` casts each value
back to its field's type, since KFP's v2 entrypoint hands integer parameters
over as floats (20.0), and names any missing or unknown key.
"""
import dataclasses
import json
import typing
from typing import Any, Dict, Type, TypeVar

T = TypeVar("T")


def base_type(hint) -> tuple:
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


def execution_parameters(settings: Type) -> Dict[str, Any]:
    """A ComponentSpec's PARAMETERS for the fields of a settings dataclass."""
    from tfx.types.component_spec import ExecutionParameter  # TFX: adapters only
    hints = typing.get_type_hints(settings)
    params = {}
    for field in dataclasses.fields(settings):
        base, optional = base_type(hints[field.name])
        params[field.name] = ExecutionParameter(type=_wire_type(base), optional=optional)
    return params


def encode(settings: Any) -> Dict[str, Any]:
    """The settings as primitive values; None-valued fields are left out."""
    hints = typing.get_type_hints(type(settings))
    values = {}
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if value is None:
            continue
        _wire_type(base_type(hints[field.name])[0])  # refuses an unsupported type early
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, tuple):
            value = ",".join(str(v) for v in value)
        values[field.name] = value
    return values


def _cast(base, value):
    if base is bool:
        return bool(int(value))
    if typing.get_origin(base) is tuple:
        return tuple(int(v) for v in str(value).split(",") if v)
    return base(value)


def decode(settings: Type[T], values: Dict[str, Any], strict: bool = False) -> T:
    """The inverse of `encode`. A required field that is absent raises KeyError;
    with `strict`, so does a key that names no field (a stage's own dict)."""
    hints = typing.get_type_hints(settings)
    names = {f.name for f in dataclasses.fields(settings)}
    unknown = sorted(set(values) - names) if strict else []
    if unknown:
        raise KeyError(f"{settings.__name__}: unknown settings {unknown}")
    out = {}
    for field in dataclasses.fields(settings):
        base, optional = base_type(hints[field.name])
        value = values.get(field.name)
        if value is None and not optional:
            raise KeyError(f"{settings.__name__}: setting {field.name!r} is missing")
        out[field.name] = None if value is None else _cast(base, value)
    return settings(**out)


def to_custom_config(key: str, settings: Any) -> Dict[str, Any]:
    """A stock component's `custom_config` carrying `settings` under `key`."""
    return {key: encode(settings)}


def from_custom_config(settings: Type[T], key: str, custom_config: Dict[str, Any]) -> T:
    """The inverse of to_custom_config; unknown or missing keys are named."""
    values = (custom_config or {}).get(key)
    if isinstance(values, str):  # some orchestrators hand nested values back as JSON
        values = json.loads(values)
    if not isinstance(values, dict):
        raise KeyError(f"custom_config has no {key!r}: {custom_config!r}")
    return decode(settings, values, strict=True)


def setting(default: Any, help_text: str, *, flag: str = "", choices: tuple = (),
            example: str = "", planned: bool = False, low=None, high=None,
            low_open: bool = False, high_open: bool = False, finite: bool = False,
            required: bool = False, positional: bool = False, metavar: str = "",
            aliases: tuple = ()):
    """A field of a settings section: its default, its help and its flag, written once.

    The CLI generates the flag (`--<section prefix><field>`, or `flag`), its help (with
    `example`, and "planned" for a default of None that the plan fills), `--config` checks
    the type and `choices`, and `bound_problems` the range [low, high] (open ends with
    `low_open`/`high_open`; `finite` refuses inf and nan). A `required` flag has no default;
    a `positional` one takes the command's bare arguments (a tuple). `aliases` are earlier
    spellings of a renamed flag, which keep working."""
    return dataclasses.field(default=default, metadata={
        "help": help_text, "flag": flag, "choices": tuple(choices), "example": example,
        "planned": planned, "low": low, "high": high, "low_open": low_open,
        "high_open": high_open, "finite": finite, "required": required,
        "positional": positional, "metavar": metavar, "aliases": tuple(aliases)})


def _bound_rule(meta: Dict[str, Any]) -> str:
    low, high = meta.get("low"), meta.get("high")
    if high is None:
        finite = "a finite number " if meta.get("finite") else ""
        return f"must be {finite}{'>' if meta.get('low_open') else '>='} {low}"
    left, right = "(" if meta.get("low_open") else "[", ")" if meta.get("high_open") else "]"
    return f"must be in {left}{low}, {high}{right}"


def _in_bounds(value: Any, meta: Dict[str, Any]) -> bool:
    low, high = meta.get("low"), meta.get("high")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return False
    if meta.get("finite") and value in (float("inf"), float("-inf")):
        return False
    below = value <= low if meta.get("low_open") else value < low
    above = high is not None and (value >= high if meta.get("high_open") else value > high)
    return not below and not above


def flag_of(settings: Any, name: str) -> str:
    """The command-line flag of field `name`: its `flag`, else the section's FLAG_PREFIX
    (a class attribute, "" if none) and the field's name, dashed."""
    field = next(f for f in dataclasses.fields(settings) if f.name == name)
    prefix = getattr(settings, "FLAG_PREFIX", "")
    return field.metadata.get("flag") or "--" + prefix + name.replace("_", "-")


def check_bounds(settings: Any) -> None:
    """Raises ValueError naming the flag of the first field outside its bounds."""
    problems = bound_problems(settings)
    if problems:
        name, rule = problems[0]
        raise ValueError(f"{flag_of(settings, name)} {rule}, got {getattr(settings, name)!r}")


def bound_problems(settings: Any):
    """(field name, rule) for each field outside its `setting` bounds; None passes only
    in an Optional field (unset: planned, off, or recovered by the stage)."""
    problems = []
    hints = typing.get_type_hints(type(settings))
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        optional = base_type(hints[field.name])[1]
        if field.metadata.get("low") is None or (value is None and optional):
            continue
        if not _in_bounds(value, field.metadata):
            problems.append((field.name, _bound_rule(field.metadata)))
    return problems
