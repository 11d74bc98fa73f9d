"""Where a manifest's rows point: locations normalized, the allowed roots, the join of a
root and a relpath that encoding uses, and remote images read when the manifest is local."""
import pytest

from components.image_example_gen.encoding.encode import local_file_job
from components.image_example_gen.readers.manifests import manifest_paths
from components.image_example_gen.readers.folder_tree import ImageFile
from components.image_example_gen.readers.units import read_file_jobs
from settings.config import PipelineConfig
from tests.support.paths import MNIST_PNG


@pytest.mark.parametrize("folder, image, expected", [
    ("/d", "a/../b/1.png", "/d/b/1.png"),
    ("/d", "/x/./1.png", "/x/1.png"),
    ("/d", "file:///x/1.png", "/x/1.png"),
    ("/d", "file://localhost/x/1.png", "/x/1.png"),
    ("/d", "gs://b/a/../1.png", "gs://b/1.png"),
    ("/d", "gs://b/../../c/1.png", "gs://b/c/1.png"),  # never out of the bucket
    ("gs://b/m", "x/1.png", "gs://b/m/x/1.png"),
    ("gs://b/m", "../../../1.png", "gs://b/1.png"),
])
def test_locations_are_normalized(folder, image, expected):
    assert manifest_paths.location(folder, image) == expected


def test_the_default_root_is_the_manifest_folder_or_bucket(tmp_path):
    assert manifest_paths.allowed_roots("gs://b/x/m.csv", None) == ["gs://b"]
    assert manifest_paths.allowed_roots(str(tmp_path / "m.csv"), " gs://c/p/ ,file:///o") == [
        str(tmp_path.resolve()), "gs://c/p", "/o"]
    assert manifest_paths.under("gs://b/p/1.png", "gs://b/p")
    assert not manifest_paths.under("gs://b/photos/1.png", "gs://b/p")


def test_relpaths_join_a_folder_or_a_manifest_folder(tmp_path):
    manifest = tmp_path / "m.csv"
    manifest.write_text("")
    assert manifest_paths.image_path(str(tmp_path), "a/1.png") == str(tmp_path / "a/1.png")
    assert manifest_paths.image_path(str(manifest), "a/1.png") == str(tmp_path / "a/1.png")
    assert manifest_paths.image_path(str(manifest), "/x/1.png") == "/x/1.png"
    assert manifest_paths.image_path(str(manifest), "gs://b/1.png") == "gs://b/1.png"
    job = local_file_job(str(manifest), "a/1.png", 0, "train", ["c"], [80, 100])
    assert job.path == str(tmp_path / "a/1.png") and job.relpath == "a/1.png"


def test_remote_images_of_a_local_manifest_are_read_in_the_shard(tmp_path):
    import tensorflow as tf
    data = (MNIST_PNG / "0" / "0013.png").read_bytes()
    tf.io.gfile.makedirs("ram://manifest-test/d")
    with tf.io.gfile.GFile("ram://manifest-test/d/1.png", "wb") as f:
        f.write(data)
    manifest = tmp_path / "m.csv"
    manifest.write_text("")
    units = [ImageFile("ram://manifest-test/d/1.png", 0, "train"),
             ImageFile(str(MNIST_PNG / "0" / "0013.png"), 0, "eval")]
    jobs = read_file_jobs(units, str(manifest), ["0"],
                          PipelineConfig.from_values().ingest_options())
    assert jobs[0].data == data and jobs[0].path == ""
    assert jobs[1].data is None and jobs[1].path == units[1].relpath
    assert manifest_paths.missing_images(["ram://manifest-test/d/1.png",
                                          "ram://manifest-test/d/2.png",
                                          "ram://manifest-test/none/1.png"]) == {
        "ram://manifest-test/d/2.png", "ram://manifest-test/none/1.png"}
