"""The bundled digits written as other tools' datasets, to their documented formats, with
this environment's libraries (pyarrow 10, TensorFlow): Hugging Face Parquet shards in the
Hub's layout, `datasets` save_to_disk folders, and TFDS prepared folders.

- Hub Parquet: `data/<split>-00000-of-0000N.parquet` (or `<split>/0000.parquet`), an image
  column struct<bytes: binary, path: string> (datasets' Image), an int64 label column
  (ClassLabel), the features in the schema metadata under `huggingface`, and optionally a
  README.md card whose YAML front matter declares them.
- save_to_disk: Arrow IPC stream files `data-00000-of-00001.arrow`, `state.json` listing
  them, `dataset_info.json` with the features; a DatasetDict adds `dataset_dict.json` and
  a folder per split.
- TFDS: `<name>/<config>/<version>/` with `dataset_info.json` (splits, shardLengths,
  supervisedKeys), `features.json` (TFDS 4's proto JSON), `label.labels.txt`, and shards
  `<name>-<split>.tfrecord-0000i-of-0000n` of tf.Example: `image` the PNG bytes, `label`
  an int64.
"""
import json
import pathlib
from typing import Dict, List, Optional, Sequence, Tuple

from tests.support.paths import MNIST_PNG

# Declared class names, in an order that is not sorted: readers must keep it.
NAMES = ("zero", "one", "two")
Row = Tuple[bytes, object]  # (image bytes, label: int id or str)


def digit_rows(per_class: int = 4, start: int = 0) -> List[Row]:
    """(PNG bytes, label id) of `per_class` real digits of classes 0, 1 and 2."""
    rows = []
    for digit in range(len(NAMES)):
        paths = sorted((MNIST_PNG / str(digit)).iterdir())[start:start + per_class]
        rows += [(p.read_bytes(), digit) for p in paths]
    return rows


def hf_features(string_labels: bool = False) -> dict:
    """datasets' features JSON of an image and a label column."""
    label = {"dtype": "string", "_type": "Value"} if string_labels else \
        {"names": list(NAMES), "_type": "ClassLabel"}
    return {"image": {"decode": True, "id": None, "_type": "Image"}, "label": label}


def _table(rows: Sequence[Row], metadata: bool, string_labels: bool = False):
    import pyarrow as pa
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("image", image), ("label", pa.string() if string_labels
                                           else pa.int64())])
    if metadata:
        schema = schema.with_metadata({"huggingface": json.dumps(
            {"info": {"features": hf_features(string_labels)}})})
    images = [{"bytes": data, "path": f"{i}.png"} for i, (data, _) in enumerate(rows)]
    return pa.table({"image": images, "label": [label for _, label in rows]}, schema=schema)


CARD = """---
dataset_info:
  features:
  - name: image
    dtype: image
  - name: label
    dtype:
      class_label:
        names:
{names}
  splits:
  - name: train
---
# Digits
"""


def write_card(root: pathlib.Path, names: Sequence[str] = NAMES) -> None:
    """A dataset card whose YAML declares the ClassLabel names (ids as string keys)."""
    lines = "\n".join(f"          '{i}': {name}" for i, name in enumerate(names))
    (root / "README.md").write_text(CARD.format(names=lines), encoding="utf-8")


def write_parquet(path: pathlib.Path, rows: Sequence[Row], metadata: bool = True,
                  row_group_size: Optional[int] = None, string_labels: bool = False):
    """One Parquet shard of `rows`, as `datasets` writes it."""
    import pyarrow.parquet as pq
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(_table(rows, metadata, string_labels), str(path),
                   row_group_size=row_group_size)
    return path


def write_hub_parquet(root: pathlib.Path, splits: Dict[str, List[Row]], shards: int = 2,
                      layout: str = "data", metadata: bool = True, card: bool = False,
                      string_labels: bool = False) -> pathlib.Path:
    """The Hub's layout: data/<split>-0000i-of-0000n.parquet, or <split>/000i.parquet."""
    for split, rows in splits.items():
        for i in range(shards):
            part = rows[i::shards]
            name = (f"data/{split}-{i:05d}-of-{shards:05d}.parquet" if layout == "data"
                    else f"{split}/{i:04d}.parquet")
            write_parquet(root / name, part, metadata, string_labels=string_labels)
    if card:
        write_card(root)
    return root


def _write_arrow_dataset(folder: pathlib.Path, rows: Sequence[Row], files: int,
                         string_labels: bool = False) -> None:
    import pyarrow as pa
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"data-{i:05d}-of-{files:05d}.arrow" for i in range(files)]
    for i, name in enumerate(names):
        table = _table(rows[i::files], True, string_labels)
        with pa.OSFile(str(folder / name), "wb") as sink:
            with pa.ipc.new_stream(sink, table.schema) as writer:
                for batch in table.to_batches(max_chunksize=5):
                    writer.write_batch(batch)
    (folder / "state.json").write_text(json.dumps({
        "_data_files": [{"filename": n} for n in names], "_fingerprint": "0",
        "_format_columns": None, "_format_kwargs": {}, "_format_type": None,
        "_output_all_columns": False, "_split": None}))
    (folder / "dataset_info.json").write_text(json.dumps({"features": hf_features(
        string_labels)}))


def write_save_to_disk(root: pathlib.Path, splits: Dict[str, List[Row]], files: int = 2,
                       string_labels: bool = False) -> pathlib.Path:
    """A DatasetDict (several splits) or a Dataset (splits {None: rows}), as save_to_disk."""
    if list(splits) == [None]:
        _write_arrow_dataset(root, splits[None], files, string_labels)
        return root
    for split, rows in splits.items():
        _write_arrow_dataset(root / split, rows, files, string_labels)
    (root / "dataset_dict.json").write_text(json.dumps({"splits": list(splits)}))
    return root


def _tf_example(image: bytes, label: int) -> bytes:
    import tensorflow as tf
    return tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


def tfds_features(image_shape=("28", "28", "1")) -> dict:
    """features.json of an Image and a ClassLabel, in TFDS 4's proto JSON."""
    prefix = "tensorflow_datasets.core.features."
    return {"pythonClassName": prefix + "features_dict.FeaturesDict", "featuresDict": {
        "features": {
            "image": {"pythonClassName": prefix + "image_feature.Image", "image": {
                "shape": {"dimensions": list(image_shape)}, "dtype": "uint8",
                "encodingFormat": "png"}},
            "label": {"pythonClassName": prefix + "class_label_feature.ClassLabel",
                      "classLabel": {"numClasses": str(len(NAMES))}}}}}


def write_tfds(root: pathlib.Path, splits: Dict[str, List[Row]], shards: int = 2,
               name: str = "digits", file_format: str = "tfrecord") -> pathlib.Path:
    """A prepared folder root/<name>/<config 'plain'>/1.0.0/; returns the version folder."""
    import tensorflow as tf
    folder = root / name / "plain" / "1.0.0"
    folder.mkdir(parents=True)
    infos = []
    for split, rows in splits.items():
        lengths = []
        for i in range(shards):
            part = rows[i::shards]
            path = folder / f"{name}-{split}.{file_format}-{i:05d}-of-{shards:05d}"
            with tf.io.TFRecordWriter(str(path)) as writer:
                for data, label in part:
                    writer.write(_tf_example(data, label))
            lengths.append(str(len(part)))
        infos.append({"name": split, "shardLengths": lengths, "numBytes": "0",
                      "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"})
    info = {"name": name, "version": "1.0.0", "splits": infos, "fileFormat": file_format,
            "supervisedKeys": {"tuple": {"items": [{"featureKey": "image"},
                                                   {"featureKey": "label"}]}}}
    (folder / "dataset_info.json").write_text(json.dumps(info))
    (folder / "features.json").write_text(json.dumps(tfds_features()))
    (folder / "label.labels.txt").write_text("".join(n + "\n" for n in NAMES))
    return folder


def read_all(listing, root, read_unit, options):
    """Every unit of `listing` through `read_unit` (hf_rows.read_hf_unit,
    tfds_folders.read_tfds_unit): ({image/filename: (split, label, class text, image
    bytes)}, the skipped records)."""
    import tensorflow as tf
    examples, skipped = {}, []
    for unit in listing.files:
        for item in read_unit(unit, str(root), listing.classes, options,
                              lambda relpath: "hashed", {}):
            if isinstance(item, dict):
                skipped.append(item)
                continue
            feature = tf.train.Example.FromString(item[1]).features.feature
            examples[feature["image/filename"].bytes_list.value[0].decode()] = (
                item[0], feature["image/class/label"].int64_list.value[0],
                feature["image/class/text"].bytes_list.value[0].decode(),
                feature["image/encoded"].bytes_list.value[0])
    return examples, skipped
