"""What a manifest changes in caching: the driver's fingerprint covers the manifest and every
image it lists, wherever they are; the span store's key takes the manifest options when set."""
import os

from components.image_example_gen import span_store
from components.image_example_gen.driver import data_fingerprint
from components.image_example_gen.spans import Span
from settings.config import PipelineConfig
from tests.support.examples import example_gen_properties
from tests.support.manifests import digit_rows, write_vertex_csv
from tests.support.paths import MNIST_PNG


def test_a_changed_image_outside_the_manifest_folder_is_a_cache_miss(tmp_path):
    images = tmp_path / "images"
    rows = digit_rows(per_class=2)
    for image, _, _ in rows:
        (images / image).parent.mkdir(parents=True, exist_ok=True)
        (images / image).write_bytes((MNIST_PNG / image).read_bytes())
    (tmp_path / "m").mkdir()
    manifest = write_vertex_csv(tmp_path / "m" / "m.csv", rows, prefix=f"{images}/")
    props = example_gen_properties(manifest, allowed_root=str(images))
    before = data_fingerprint(manifest, props)
    assert data_fingerprint(manifest, props) == before
    touched = images / rows[3][0]
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1000))
    assert data_fingerprint(manifest, props) != before
    # The images' own folder alone would not see it: the manifest's folder holds one file.
    assert before.startswith(f"files:{len(rows) + 1},")


def test_manifest_options_enter_the_span_store_key_only_when_set():
    def key(**values):
        options = PipelineConfig.from_values(data="/data", **values).ingest_options()
        return span_store.entry_key(Span(1, None, "/data/s1"), "digest", options, ["a"], ["a"])
    plain = key()
    assert key(allowed_root=None) == plain
    assert len({plain, key(allowed_root="/x"), key(path_column="img"), key(label_column="y"),
                key(split_column="fold")}) == 5
