"""Prepares a tiny TFDS dataset of the bundled digits with the real tensorflow-datasets,
for test_tfds_real_tools.py; run with the overlay venv's Python, never this project's:

    VENV/bin/python tests/support/tfds_real_writer.py OUT DIGITS_PNG_FOLDER

OUT/tfrecord/digits/1.0.0/ gets the train, validation and test splits as TFRecord shards
(Image and ClassLabel features, supervised keys); OUT/array_record/... the same as
array_record shards when array_record is installed; OUT/manifest.json the versions and
each split's rows as [digit file, label].
"""
import json
import os
import sys

NAMES = ["zero", "one", "two"]
SPLITS = {"train": (0, 4), "validation": (4, 6), "test": (6, 7)}


def _rows(digits: str, start: int, stop: int) -> list:
    return [[os.path.join(digits, str(label), name), label] for label in range(len(NAMES))
            for name in sorted(os.listdir(os.path.join(digits, str(label))))[start:stop]]


def _builder(digits: str):
    import tensorflow_datasets as tfds

    class Digits(tfds.core.GeneratorBasedBuilder):
        """Digits 0, 1 and 2 of the bundled MNIST sample."""

        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
                "image": tfds.features.Image(shape=(28, 28, 1)),
                "label": tfds.features.ClassLabel(names=NAMES)}),
                supervised_keys=("image", "label"))

        def _split_generators(self, dl_manager):
            return {split: self._generate_examples(span) for split, span in SPLITS.items()}

        def _generate_examples(self, span):
            for path, label in _rows(digits, *span):
                yield os.path.basename(path) + str(label), {"image": path, "label": label}
    return Digits


def main(out: str, digits: str) -> None:
    import tensorflow_datasets as tfds
    builder_class = _builder(digits)
    formats = ["tfrecord"]
    try:
        import array_record  # noqa: F401
        formats.append("array_record")
    except ImportError:
        pass
    for file_format in formats:
        builder = builder_class(data_dir=os.path.join(out, file_format),
                                file_format=file_format)
        builder.download_and_prepare()
    manifest = {"tensorflow_datasets": tfds.__version__, "formats": formats,
                "splits": {split: _rows(digits, *span) for split, span in SPLITS.items()}}
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main(*sys.argv[1:3])
