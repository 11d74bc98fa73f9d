"""probe_images: image sides and channels of a sample, from image headers."""
import pytest

from components.image_example_gen.readers.folder_tree import DatasetError, list_class_folders
from settings.config import PipelineConfig
from pipeline.planning.data_probe import probe_images

OPTIONS = PipelineConfig.from_values().ingest_options()


def test_mnist_digits_are_28_pixels_and_grayscale(mnist_subset):
    found = probe_images(str(mnist_subset), list_class_folders(str(mnist_subset)), OPTIONS)
    assert (found.side, found.side_max, found.channels, found.sampled) == (28, 28, 1, 100)


def test_most_common_side_and_channels_win_and_the_spread_is_kept(tmp_path, make_image):
    for i in range(3):
        make_image(tmp_path / "a" / f"{i}.jpg", size=(40, 30), mode="RGB", fmt="JPEG")
    make_image(tmp_path / "b" / "x.png", size=(8, 8), mode="L")
    make_image(tmp_path / "b" / "y.png", size=(20, 90), mode="L")
    found = probe_images(str(tmp_path), list_class_folders(str(tmp_path)), OPTIONS)
    assert (found.side, found.channels) == (40, 3)  # the long side, as the resize sees it
    assert (found.side_median, found.side_max) == (40, 90)


def test_no_readable_image_is_a_dataset_error(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.png").write_bytes(b"not a png")
    with pytest.raises(DatasetError, match="could be opened"):
        probe_images(str(tmp_path), list_class_folders(str(tmp_path)), OPTIONS)


def test_a_span_patterns_facts_accept_a_groups_file_naming_every_spans_images(tmp_path,
                                                                              make_image):
    from settings.config import PipelineConfig
    from pipeline.planning.resolve import read_data_facts
    rows = ["path,group"]
    for span in (1, 2):
        for label in ("cat", "dog"):
            for i in range(3):
                make_image(tmp_path / f"span-{span}" / label / f"{span}{i}.png", size=(8, 8),
                           seed=span * 10 + i)
                rows.append(f"{label}/{span}{i}.png,g{i % 2}")
        (tmp_path / f"span-{span}" / "_SUCCESS").touch()  # complete: ready at once
    groups = tmp_path / "groups.csv"
    groups.write_text("\n".join(rows) + "\n")
    config = PipelineConfig.from_values(data=str(tmp_path / "span-{SPAN}"), groups=str(groups))
    facts = read_data_facts(config)  # each span holds half of the file's paths
    assert facts.classes == 2
