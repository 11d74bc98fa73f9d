"""`images`: a folder or bucket prefix of image files, walked recursively as `imagepipe
predict --data` walks one; each image is a Record with its bytes and no answer,
so the monitor scores it with the served model."""
from typing import Iterable, Iterator, Sequence

from core.storage import files
from components.image_example_gen.readers.folder_tree import is_image_name
from monitor.readers.registry import reader
from monitor.records import BadRecord, Item, Record


@reader("images", sniff=lambda sample: is_image_name(sample.name))
def read_images(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """A Record(id=path, image=bytes) per file; a file that cannot be read, a BadRecord."""
    for path in paths:
        try:
            yield Record(path, image=files.read_bytes(path))
        except Exception as e:  # noqa: BLE001  (OSError, TensorFlow's or the store's errors)
            yield BadRecord(path, f"unreadable: {type(e).__name__}: {e}")
