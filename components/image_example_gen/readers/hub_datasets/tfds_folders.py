"""TensorFlow Datasets prepared folders (`<name>/<config>/<version>/`), read without
tensorflow_datasets: dataset_info.json (splits, shard lengths), features.json (which
feature is the Image, which the ClassLabel), `<label>.labels.txt` (class names) and
shards `<name>-<split>.tfrecord-00000-of-00004` of tf.Example in TFDS's encoding: the
image feature holds the encoded PNG or JPEG bytes, the label an int64 class id.
"""
import dataclasses
import json
import os
import re
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import tensorflow as tf

from components.image_example_gen.encoding import encode
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from components.image_example_gen.readers.hub_datasets.labelled_rows import encode_row, split_roles
from components.image_example_gen.readers.tfrecords import iter_records, record_error
from core.storage import files

INFO_FILE, FEATURES_FILE = "dataset_info.json", "features.json"
LABELS_SUFFIX = ".labels.txt"
_SHARD = re.compile(r"^(?P<prefix>.+)\.(?P<kind>tfrecord|array_record)-(?P<index>\d+)-of-\d+$")
ARRAY_RECORD = ("TFDS array_record shards cannot be read here (no array_record reader "
                "beside the pinned TensorFlow); prepare the dataset again with "
                "download_and_prepare(file_format='tfrecord')")
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")


@dataclasses.dataclass(frozen=True)
class TfdsShard:
    """One TFRecord shard (`path` relative to the root), records [start, stop)."""

    path: str
    start: int
    stop: int
    split: Optional[str]
    image: str
    label: str


def _version_dir(root: str, depth: int = 2) -> Optional[str]:
    """The folder under `root` (itself, a version, or config/version) holding
    features.json; the highest version if several; None if there is none."""
    if not files.isdir(root):
        return None
    dirs, names = files.list_dir(root)
    if FEATURES_FILE in names and INFO_FILE in names:
        return ""
    versions = sorted((d for d in dirs if _VERSION.match(d)),
                      key=lambda v: tuple(map(int, v.split("."))))
    if versions and _version_dir(os.path.join(root, versions[-1]), 0) == "":
        return versions[-1]
    found = {d: _version_dir(os.path.join(root, d), depth - 1) for d in dirs} if depth > 1 \
        else {}
    found = {d: sub for d, sub in found.items() if sub}
    if len(found) > 1:
        raise DatasetError(f"--data {root}: configs {', '.join(sorted(found))}; point "
                           "--data at one of them")
    return "/".join(next(iter(found.items()))) if found else None


def looks_like_tfds(root: str) -> bool:
    """features.json and dataset_info.json here or in a version folder (1.2.0/): a look at
    the folders of a class-per-folder tree would cost a listing per class on a bucket;
    a `<name>/` folder of configs needs --format tfds."""
    return _version_dir(root, depth=1) is not None


def _features(features: dict) -> Dict[str, Tuple[str, dict]]:
    """{feature name: (class name, its JSON)}: TFDS 4's proto JSON (`pythonClassName`,
    `featuresDict`) or the older `type`/`content` JSON; nested dicts joined by '/'."""
    inner = features.get("featuresDict", {}).get("features") or features.get("content") or {}
    found = {}
    for name, feature in inner.items():
        kind = feature.get("pythonClassName") or feature.get("type") or ""
        if kind.endswith("FeaturesDict"):
            found.update({f"{name}/{k}": v for k, v in _features(feature).items()})
        else:
            found[name] = (kind.rsplit(".", 1)[-1], feature)
    return found


def _supervised(info: dict) -> Tuple[Optional[str], Optional[str]]:
    keys = info.get("supervisedKeys") or {}
    if "input" in keys:
        return keys.get("input"), keys.get("output")
    items = keys.get("tuple", {}).get("items") or []
    return tuple(i.get("featureKey") for i in items[:2]) if len(items) >= 2 else (None, None)


def _pick(flagged: str, supervised: Optional[str], kinds: List[str], kind: str,
          flag: str, where: str) -> str:
    if flagged in kinds or supervised in kinds:
        return flagged if flagged in kinds else supervised
    if len(kinds) == 1:
        return kinds[0]
    raise DatasetError(f"{where}: {len(kinds)} {kind} features ({', '.join(kinds) or 'none'})"
                       f"; name one with {flag}")


def _class_names(folder: str, label: str, feature: dict) -> List[str]:
    """`<label>.labels.txt` beside features.json, else ids 0..numClasses-1 as names."""
    path = os.path.join(folder, label + LABELS_SUFFIX)
    if files.exists(path):
        return [line for line in files.read_text(path).splitlines() if line]
    count = feature.get("classLabel", {}).get("numClasses") or \
        feature.get("content", {}).get("num_classes") or feature.get("num_classes")
    if not count:
        raise DatasetError(f"{path}: missing, and {FEATURES_FILE} gives no class count")
    return [str(i) for i in range(int(count))]


def _shards(root: str, version: str, info: dict) -> List[Tuple[str, str, int]]:
    """(relpath, split name, record count) of every shard, in split and shard order."""
    folder = os.path.join(root, version) if version else root
    lengths = {s["name"]: [int(n) for n in s.get("shardLengths", [])]
               for s in info.get("splits", [])}
    if info.get("fileFormat") == "array_record":
        raise DatasetError(f"{folder}: {ARRAY_RECORD}")
    found = []
    for name in files.list_dir(folder)[1]:
        match = _SHARD.match(name)
        if match and match["kind"] == "array_record":
            raise DatasetError(f"{os.path.join(folder, name)}: {ARRAY_RECORD}")
        if match:
            split, index = _split_of(match["prefix"], info), int(match["index"])
            count = lengths.get(split, [])[index] if index < len(lengths.get(split, [])) \
                else None
            found.append((f"{version}/{name}" if version else name, split, count))
    return found


def _split_of(prefix: str, info: dict) -> str:
    """`train-clean` of the shard prefix `<name>-train-clean` (the dataset's name from
    dataset_info.json; else the part after the last '-')."""
    name = info.get("name", "")
    return prefix[len(name) + 1:] if name and prefix.startswith(name + "-") \
        else prefix.rsplit("-", 1)[-1]


def list_tfds(root: str, options: IngestOptions) -> Listing:
    """A TFDS prepared folder: root, `<version>/` or `<config>/<version>/` under it.

    Raises:
      DatasetError: no features.json, array_record shards, no Image or ClassLabel feature.
    """
    version = _version_dir(root)
    if version is None:
        raise DatasetError(f"--data {root}: no {FEATURES_FILE} and {INFO_FILE} here or in "
                           "<version>/ or <config>/<version>/ folders")
    folder = os.path.join(root, version) if version else root
    info = json.loads(files.read_text(os.path.join(folder, INFO_FILE)))
    features = _features(json.loads(files.read_text(os.path.join(folder, FEATURES_FILE))))
    image_in, label_in = _supervised(info)
    image = _pick(options.image_key, image_in, [n for n, (k, _) in features.items()
                                                if k == "Image"], "Image", "--image-key", folder)
    label = _pick(options.label_key, label_in, [n for n, (k, _) in features.items()
                                                if k == "ClassLabel"], "ClassLabel",
                  "--label-key", folder)
    shards = _shards(root, version, info)
    if not shards:
        raise DatasetError(f"{folder}: no <name>-<split>.tfrecord-NNNNN-of-NNNNN shards")
    roles, unused = split_roles({split for _, split, _ in shards}, root)
    units = [TfdsShard(path, 0, _count(root, path) if count is None else count, roles[split],
                       image, label) for path, split, count in shards if split in roles]
    return Listing(classes=_class_names(folder, label, features[label][1]), files=units,
                   format="tfds", unused=unused)


def _count(root: str, relpath: str) -> int:
    """Records in a shard whose length dataset_info.json does not give (older TFDS)."""
    return sum(1 for _ in iter_records(os.path.join(root, relpath)))


def _feature_value(feature, kind: str):
    values = getattr(feature, kind).value if feature is not None else []
    return values[0] if values else None


def read_tfds_unit(unit: TfdsShard, root: str, classes: List[str], options: IngestOptions,
                   split_of: Callable[[str], str], groups: Dict[str, str]
                   ) -> Iterator[encode.Encoded]:
    """Encoded examples and skipped records (`shard#index`) of one shard; a truncated
    shard keeps its whole records and reports the rest, as TFRecord input does."""
    count = 0
    try:
        for record in iter_records(os.path.join(root, unit.path)):
            feature = tf.train.Example.FromString(record).features.feature
            relpath = f"{unit.path}#{count}"
            yield encode_row(_feature_value(feature.get(unit.image), "bytes_list"),
                             _feature_value(feature.get(unit.label), "int64_list"), relpath,
                             unit.split or split_of(relpath), classes, options, groups)
            count += 1
    except tf.errors.OpError as e:
        yield {"path": f"{unit.path}#{count}+",
               "reason": f"unreadable TFRecord: {record_error(e)}"}


def sample_tfds_images(root: str, listing: Listing, count: int) -> List[bytes]:
    """The first `count` encoded images, for the plan's probe of image sizes."""
    found = []
    for unit in listing.files:
        for record in iter_records(os.path.join(root, unit.path)):
            image = tf.train.Example.FromString(record).features.feature.get(unit.image)
            found += [image.bytes_list.value[0]] if image and image.bytes_list.value else []
            if len(found) >= count:
                return found
    return found
