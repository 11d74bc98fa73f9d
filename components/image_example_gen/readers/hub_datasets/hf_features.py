"""A Hugging Face dataset's declared features: which column is the image, which the label,
and the label's class names, from the dataset card, Parquet/Arrow schema metadata or
`save_to_disk`'s dataset_info.json. Pure: takes parsed text and schemas, reads no file."""
import dataclasses
import json
from typing import Dict, List, Optional, Tuple

import pyarrow as pa
import yaml

from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import DatasetError

# The schema metadata key `datasets` writes its features under (Parquet and Arrow).
SCHEMA_KEY = b"huggingface"
# Label columns taken without a ClassLabel declaration, in this order.
LABEL_NAMES = ("label", "labels")


@dataclasses.dataclass(frozen=True)
class Declared:
    """What a dataset declares: its Image columns, and class names per ClassLabel column."""

    images: Tuple[str, ...] = ()
    names: Dict[str, List[str]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Columns:
    """The image and label columns, and whether labels are strings (named by value)."""

    image: str
    label: str
    string_labels: bool


def from_features(features: Optional[dict]) -> Declared:
    """Declared of `datasets`' features JSON: {"image": {"_type": "Image"}, "label":
    {"_type": "ClassLabel", "names": [...]}} (dataset_info.json, schema metadata)."""
    images, names = [], {}
    for name, feature in (features or {}).items():
        kind = feature.get("_type") if isinstance(feature, dict) else None
        if kind == "Image":
            images.append(name)
        elif kind == "ClassLabel" and feature.get("names"):
            names[name] = [str(n) for n in feature["names"]]
    return Declared(tuple(images), names)


def from_schema(schema: pa.Schema) -> Declared:
    """Declared of the `huggingface` entry of a Parquet or Arrow schema's metadata."""
    raw = (schema.metadata or {}).get(SCHEMA_KEY)
    if not raw:
        return Declared()
    try:
        info = json.loads(raw).get("info") or {}
    except (ValueError, AttributeError):
        return Declared()
    return from_features(info.get("features"))


def _card_info(card: str) -> dict:
    """The card's YAML front matter's `dataset_info` (the `default` config's, or the first)."""
    if not card.startswith("---"):
        return {}
    try:
        meta = yaml.safe_load(card.split("---", 2)[1]) or {}
    except (yaml.YAMLError, IndexError):
        return {}
    info = meta.get("dataset_info") if isinstance(meta, dict) else None
    if isinstance(info, list):
        info = next((c for c in info if c.get("config_name") == "default"), info[0] if info
                    else None)
    return info if isinstance(info, dict) else {}


def _card_names(declared) -> List[str]:
    """A card's class_label names, {id: name} (ids 0..n-1 in any order) or a list."""
    if isinstance(declared, dict):
        ids = sorted(declared, key=int)
        if [int(i) for i in ids] != list(range(len(ids))):
            raise DatasetError(f"dataset card: class_label ids {', '.join(map(str, ids))} "
                               "are not 0..n-1")
        declared = [declared[i] for i in ids]
    return [str(n) for n in declared]


def from_card(card: str) -> Declared:
    """Declared of a dataset card (README.md): `dataset_info: features: - name: label
    dtype: class_label: names: {'0': cat, '1': dog}`; names keep their ids' order."""
    images, names = [], {}
    for feature in _card_info(card).get("features") or []:
        dtype = feature.get("dtype") if isinstance(feature, dict) else None
        if dtype == "image":
            images.append(feature["name"])
        elif isinstance(dtype, dict) and isinstance(dtype.get("class_label"), dict):
            names[feature["name"]] = _card_names(dtype["class_label"].get("names") or {})
    return Declared(tuple(images), names)


def merged(first: Declared, second: Declared) -> Declared:
    """`first`'s declarations, and `second`'s where `first` declares none."""
    return Declared(first.images or second.images, first.names or second.names)


def _is_image_type(kind: pa.DataType) -> bool:
    if pa.types.is_struct(kind):
        return any(kind[i].name == "bytes" for i in range(kind.num_fields))
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _one(found: List[str], what: str, flag: str, schema: pa.Schema, where: str) -> str:
    if len(found) == 1:
        return found[0]
    have = ", ".join(f"{f.name} ({f.type})" for f in schema)
    many = f"several {what} columns ({', '.join(found)})" if found else f"no {what} column"
    raise DatasetError(f"{where}: {many}; name one with {flag}. Columns: {have}")


def choose_columns(schema: pa.Schema, declared: Declared, options: IngestOptions,
                   where: str) -> Columns:
    """The image and label columns: --image-key/--label-key if they name columns, else
    the declared Image and ClassLabel ones, else the one image-like column and `label`."""
    kinds = {f.name: f.type for f in schema}
    image = options.image_key if options.image_key in kinds else _one(
        [n for n in declared.images if n in kinds]
        or [n for n, k in kinds.items() if _is_image_type(k)],
        "image", "--image-key", schema, where)
    label = options.label_key if options.label_key in kinds else _one(
        [n for n in declared.names if n in kinds]
        or [n for n in LABEL_NAMES if n in kinds][:1], "label", "--label-key", schema, where)
    kind = kinds[label]
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return Columns(image, label, True)
    if not pa.types.is_integer(kind):
        raise DatasetError(f"{where}: label column {label!r} is {kind}; expected integer "
                           "class ids or class-name strings")
    return Columns(image, label, False)
