"""`--config FILE`: the one config's values from YAML or TOML; flags still override them.

The file holds the same settings as the flags: nested by section, as `imagepipe config show`
prints them (`training: {epochs: 20}`, `drift: {brightness: 0.2}`), or by flat name
(`train_steps` or `train-steps`, `drift_brightness`). Values are type-checked against their
section's field, so a typo or a string where a number belongs fails before anything runs.
"""
import dataclasses
import typing
from typing import Any, Dict

import yaml

from core.parameters import base_type
from core.storage import files

from settings.config import FLAT, FLAT_OF, SECTIONS, ConfigError, PipelineConfig, field_of


def _field(name: str):
    section, field = FLAT[name]
    return SECTIONS[section], field_of(SECTIONS[section], field)


def _check_type(path: str, name: str, value: Any) -> Any:
    kind, field = _field(name)
    kind, optional = base_type(typing.get_type_hints(kind)[field.name])
    if value is None and optional:
        return None
    ok = (isinstance(value, bool) if kind is bool else
          isinstance(value, int) and not isinstance(value, bool) if kind is int else
          isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else
          isinstance(value, kind))
    if not ok:
        raise ConfigError(f"--config {path}: {name} must be {kind.__name__}, "
                          f"got {value!r}")
    return float(value) if kind is float else value


def _toml():
    """tomllib is Python 3.11+; on 3.10 TOML needs the tomli package."""
    try:
        import tomllib
        return tomllib
    except ImportError:
        try:
            import tomli
            return tomli
        except ImportError:
            raise ConfigError("--config: TOML needs Python 3.11 or `pip install tomli`; "
                              "or use a .yaml file") from None


def load_config_file(path: str) -> Dict[str, Any]:
    """{field name: value} from a .yaml/.yml or .toml file; raises ConfigError naming it."""
    try:
        found = files.isfile(path)
    except Exception as e:  # noqa: BLE001  (a refused or missing bucket: name it, exit 2)
        raise ConfigError(f"--config {path}: cannot be read ({e})") from None
    if not found:
        raise ConfigError(f"--config {path}: no such file")
    try:
        if path.endswith(".toml"):
            values = _toml().loads(files.read_text(path))
        elif path.endswith((".yaml", ".yml")):
            values = yaml.safe_load(files.read_text(path)) or {}
        else:
            raise ConfigError(f"--config {path}: use a .yaml, .yml or .toml file")
    except ConfigError:
        raise
    except (yaml.YAMLError, ValueError) as e:  # TOMLDecodeError is a ValueError
        raise ConfigError(f"--config {path}: not valid {path.rsplit('.', 1)[-1].upper()}: "
                          f"{str(e).splitlines()[0]}") from None
    if not isinstance(values, dict):
        raise ConfigError(f"--config {path}: expected settings as key: value pairs")
    result = {}
    for name, value in _flat_items(path, values):
        result[name] = _check_type(path, name, value)
        choices = _field(name)[1].metadata.get("choices")
        if choices and value is not None and result[name] not in choices:
            raise ConfigError(f"--config {path}: {name} must be one of "
                              f"{', '.join(map(str, choices))}, got {value!r}")
    return result


def _flat_items(path: str, values: Dict[str, Any]):
    """(flat name, value) pairs of a file written flat, nested by section, or both."""
    for key, value in values.items():
        name = str(key).replace("-", "_")
        if name in SECTIONS and isinstance(value, dict):
            for field, inner in value.items():
                where = (name, str(field).replace("-", "_"))
                if where not in FLAT_OF:
                    raise ConfigError(f"--config {path}: unknown setting {field!r} in "
                                      f"section {key!r} (see `imagepipe config show`)")
                yield FLAT_OF[where], inner
        elif name in FLAT:
            yield name, value
        else:
            raise ConfigError(f"--config {path}: unknown setting {key!r} (see `imagepipe "
                              "config show` for every setting)")


def to_yaml(config: PipelineConfig) -> str:
    """The effective config as YAML, loadable again with --config."""
    nested = {name: {f.name: getattr(getattr(config, name), f.name)
                     for f in dataclasses.fields(kind)} for name, kind in SECTIONS.items()}
    return yaml.safe_dump(nested, sort_keys=False)
