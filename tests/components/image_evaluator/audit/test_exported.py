"""The audit on models exported as the Trainer exports them: a Keras Applications
backbone and a --module-file model; Grad-CAM where it applies. (The built-in CNN's
Grad-CAM is in tests/components/image_evaluator/test_executor.py's audit.json.)"""
import glob

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from components.image_evaluator.audit.classifier import decode, load_classifier, predict
from components.image_evaluator.audit.saliency import GRAD_CAM, INTEGRATED_GRADIENTS, saliency_maps

pytestmark = pytest.mark.integration  # real TFT, Keras exports

SIDE = 64  # MobileNetV2's last features are 2x2 here (1x1 at 32 px: no Grad-CAM)


@pytest.fixture(scope="module")
def tft_output(tmp_path_factory):
    """A real Transform output at SIDE px, RGB, over twelve ingested images."""
    import tests.support.transformed as transformed
    from tests.support.images import write_image
    root = tmp_path_factory.mktemp("audit_tft")
    examples_dir, _ = transformed.ingest(root, write_image, 3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(transformed, "SIZE", SIDE)  # transform() analyzes at SIZE
        transformed.transform(f"{examples_dir}/train/*", str(root / "tmp"), str(root / "tft"), 3)
    return tft.TFTransformOutput(str(root / "tft")), examples_dir


def _model(kind, tft_output):
    import tf_keras as keras
    keras.utils.set_random_seed(0)  # untrained: an unlucky draw can zero a Grad-CAM map
    shape = (SIDE, SIDE, 3)
    if kind == "backbone":
        from modules.networks.backbones import build_backbone_model
        from modules.signatures import tft_normalization
        return build_backbone_model("mobilenet_v2", shape, 2, None,
                                    *tft_normalization(tft_output))
    from modules.networks import user_module
    path = "modules/examples/tiny_convnet.py"
    with open(path) as f:
        return user_module.build(user_module.load(f.read(), path), path, shape, 2, None)


@pytest.mark.parametrize("kind, method, layer", [
    ("backbone", GRAD_CAM, "mobilenetv2_1.00_64"),
    # The user's network is one nested layer with a 2-D output: integrated gradients.
    ("module_file", INTEGRATED_GRADIENTS, None)])
def test_saliency_maps_exist_for_every_kind_of_model(tft_output, tmp_path, kind, method, layer):
    from modules.signatures import export
    output, examples_dir = tft_output
    export(_model(kind, output), output, ["c0", "c1"], str(tmp_path / "model"))
    classifier = load_classifier(str(tmp_path / "model"))
    assert (classifier.gradcam is not None) == (method == GRAD_CAM)
    records = tf.data.TFRecordDataset(glob.glob(f"{examples_dir}/eval/*"), "GZIP")
    encoded = [tf.train.Example.FromString(r.numpy()).features.feature["image/encoded"]
               .bytes_list.value[0] for r in records.take(3)]
    pixels = decode(classifier, encoded)
    found, found_layer, maps = saliency_maps(
        classifier, pixels, predict(classifier, pixels).argmax(axis=1))
    assert (found, found_layer, maps.shape) == (method, layer, (len(encoded), SIDE, SIDE))
    # Untrained networks: a map may be flat (Grad-CAM keeps only positive evidence),
    # not all of them.
    assert maps.std() > 0 and np.isfinite(maps).all()
