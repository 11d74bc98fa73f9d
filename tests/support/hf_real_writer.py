"""Writes tiny datasets with the real Hugging Face `datasets` (and the pyarrow it brings),
for test_hf_real_tools.py; run with a separate venv's Python, never this project's:

    VENV/bin/python tests/support/hf_real_writer.py OUT DIGITS_PNG_FOLDER

OUT gets: hub/ (a DatasetDict's shards in the Hub's data/<split>-0000i-of-00002.parquet
layout, image bytes embedded and the README card as push_to_hub writes them),
card_only/ (the same shards without schema metadata: names from the card alone), paths/
(the shards as to_parquet writes image files: their paths, no bytes), strings/ (string
labels, to_parquet), disk_dict/ and
disk_one/ (save_to_disk of the DatasetDict and of its train split), large/ (a Parquet
file and an Arrow stream of large_binary/large_string columns, zstd, data page v2), and
manifest.json: versions, and each split's rows as [digit file, label].
Imports only the standard library, `datasets` and pyarrow: it runs outside the project.
"""
import json
import os
import sys

NAMES = ["zero", "one", "two"]
SPLITS = {"train": (0, 4), "validation": (4, 6), "test": (6, 7)}


def _rows(digits: str, start: int, stop: int) -> list:
    return [[os.path.join(digits, str(label), name), label] for label in range(len(NAMES))
            for name in sorted(os.listdir(os.path.join(digits, str(label))))[start:stop]]


def _dataset_dict(digits: str):
    from datasets import ClassLabel, Dataset, DatasetDict, Features, Image
    features = Features({"image": Image(), "label": ClassLabel(names=NAMES)})
    rows = {split: _rows(digits, *span) for split, span in SPLITS.items()}
    return rows, DatasetDict({split: Dataset.from_dict(
        {"image": [p for p, _ in found], "label": [lbl for _, lbl in found]}, features=features)
        for split, found in rows.items()})


def _card(dataset_dict, folder: str) -> bool:
    """README.md as push_to_hub writes it: the features in the YAML front matter."""
    try:
        from datasets.info import DatasetInfosDict
        from huggingface_hub import DatasetCard, DatasetCardData
        card_data = DatasetCardData()
        DatasetInfosDict({"default": dataset_dict["train"].info}).to_dataset_card_data(card_data)
        DatasetCard("---\n" + str(card_data) + "\n---\n# Digits\n").save(
            os.path.join(folder, "README.md"))
        return True
    except Exception as e:  # noqa: BLE001  (an API this datasets version lacks)
        print(f"no card: {type(e).__name__}: {e}", file=sys.stderr)
        return False


def _embedded(shard):
    """The shard with its image files' bytes in the rows, as push_to_hub uploads it."""
    from datasets.table import embed_table_storage
    return shard.with_format("arrow").map(embed_table_storage, batched=True)


def _write(path: str, write) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write(path)


def _hub(dataset_dict, out: str) -> bool:
    """hub/ and card_only/ (embedded bytes), paths/ (to_parquet as it is: paths only)."""
    import pyarrow.parquet as pq
    for split, dataset in dataset_dict.items():
        for i in range(2):
            name = f"data/{split}-{i:05d}-of-00002.parquet"
            shard = dataset.shard(num_shards=2, index=i, contiguous=True)
            _write(os.path.join(out, "paths", name), shard.to_parquet)
            path = os.path.join(out, "hub", name)
            _write(path, _embedded(shard).to_parquet)
            _write(os.path.join(out, "card_only", name), lambda bare: pq.write_table(
                pq.read_table(path).replace_schema_metadata(None), bare))
    return _card(dataset_dict, os.path.join(out, "hub")) and _card(
        dataset_dict, os.path.join(out, "card_only"))


def _strings(digits: str, out: str) -> list:
    from datasets import Dataset, Features, Image, Value
    rows = _rows(digits, 0, 3)
    features = Features({"image": Image(), "label": Value("string")})
    Dataset.from_dict({"image": [p for p, _ in rows], "label": [NAMES[lbl] for _, lbl in rows]},
                      features=features).to_parquet(
        os.path.join(out, "strings", "data", "train-00000-of-00001.parquet"))
    return rows


def _large(digits: str, out: str) -> list:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rows = _rows(digits, 0, 2)
    image = pa.struct([("bytes", pa.large_binary()), ("path", pa.large_string())])
    table = pa.table({
        "image": pa.array([{"bytes": open(p, "rb").read(), "path": p} for p, _ in rows],
                          type=image),
        "label": pa.array([NAMES[lbl] for _, lbl in rows], type=pa.large_string())})
    os.makedirs(os.path.join(out, "large"), exist_ok=True)
    pq.write_table(table, os.path.join(out, "large", "train.parquet"), compression="zstd",
                   data_page_version="2.0")
    with pa.OSFile(os.path.join(out, "large", "data-00000-of-00001.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=2)
    return rows


def main(out: str, digits: str) -> None:
    import datasets
    import pyarrow
    rows, dataset_dict = _dataset_dict(digits)
    card = _hub(dataset_dict, out)
    dataset_dict.save_to_disk(os.path.join(out, "disk_dict"))
    dataset_dict["train"].save_to_disk(os.path.join(out, "disk_one"))
    manifest = {"datasets": datasets.__version__, "pyarrow": pyarrow.__version__,
                "card": card, "splits": rows, "strings": _strings(digits, out),
                "large": _large(digits, out)}
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main(*sys.argv[1:3])
