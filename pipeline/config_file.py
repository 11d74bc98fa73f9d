"""`--config FILE`: the one config's values from YAML or TOML; flags still override them.

The file holds the same settings as the flags, by field name (`train_steps`
or `train-steps`). Values are type-checked against the dataclass, so a typo
or a string where a number belongs fails before anything runs.
"""
import typing
from typing import Any, Dict

import yaml

from components.common.storage import files

from pipeline.config import ConfigError, PipelineConfig, config_fields


def _check_type(path: str, name: str, value: Any) -> Any:
    hint = typing.get_type_hints(PipelineConfig)[name]
    allowed = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    if value is None and type(None) in typing.get_args(hint):
        return None
    kind = allowed[0]
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
    known = {f.name for f in config_fields()}
    result = {}
    for key, value in values.items():
        name = str(key).replace("-", "_")
        if name not in known:
            raise ConfigError(f"--config {path}: unknown setting {key!r} (see `imagepipe "
                              "config show` for every setting)")
        result[name] = _check_type(path, name, value)
        choices = next(f for f in config_fields() if f.name == name).metadata.get("choices")
        if choices and value is not None and result[name] not in choices:
            raise ConfigError(f"--config {path}: {name} must be one of "
                              f"{', '.join(map(str, choices))}, got {value!r}")
    return result


def to_yaml(config: PipelineConfig) -> str:
    """The effective config as YAML, loadable again with --config."""
    return yaml.safe_dump({f.name: getattr(config, f.name) for f in config_fields()},
                          sort_keys=False)
