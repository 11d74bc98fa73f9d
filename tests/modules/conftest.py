"""The `transformed` fixture: a real Transform output over a few ingested images."""
import pytest
import tensorflow_transform as tft
from tfx.components.trainer.fn_args_utils import DataAccessor
from tfx.components.util import tfxio_utils
from tfx.types import artifact_utils, standard_artifacts

from tests.transformed import Transformed, ingest, transform


@pytest.fixture(params=[1, 3], ids=["gray", "rgb"])
def transformed(request, tmp_path, make_image) -> Transformed:
    """Twelve 8x8 PNGs in two classes, ingested and analyzed, in 1 or 3 channels."""
    channels = request.param
    examples_dir, images = ingest(tmp_path, make_image, channels)
    files = {s: f"{examples_dir}/{s}/*" for s in ("train", "eval")}
    transform(files["train"], str(tmp_path / "tft_tmp"), str(tmp_path / "tft"), channels)
    artifact = standard_artifacts.Examples()
    artifact.uri = examples_dir
    artifact.split_names = artifact_utils.encode_split_names(["train", "eval"])
    accessor = DataAccessor(
        tf_dataset_factory=tfxio_utils.get_tf_dataset_factory_from_artifact([artifact], []),
        record_batch_factory=None, data_view_decode_fn=None)
    return Transformed(examples_dir, files, tft.TFTransformOutput(str(tmp_path / "tft")),
                       accessor, images, channels)
