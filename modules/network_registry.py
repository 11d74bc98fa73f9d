"""The one registry of networks that `--model` names: adding a network touches this file.

Each entry says what the network is for and where it is built. A built-in
network names its builder, `module:function`, called as
`build(input_shape, num_classes, arch)` and imported only when the network is
built: the flags, the planner and the compiler read this registry without
loading TensorFlow. A Keras Applications backbone carries how imagepipe feeds
and fine-tunes it, and modules/networks/backbones.py builds every one of them.
"""
import dataclasses
import importlib
from typing import Callable, Dict, Optional, Sequence

# The network comes from the user's --module-file (modules/networks/user_module.py).
MODULE = "module"


@dataclasses.dataclass(frozen=True)
class Backbone:
    """One Keras Applications network, and how imagepipe feeds and fine-tunes it."""

    build: str  # the class in keras.applications
    scale: float  # backbone input = pixels in [0, 255] * scale + offset (per channel)
    offset: Sequence[float]
    bgr: bool  # channels reversed before scale/offset (caffe-style ResNet)
    # The first layer of the top blocks that phase 2 unfreezes.
    fine_tune_from: str


@dataclasses.dataclass(frozen=True)
class Network:
    """A network `--model` can name: a built-in builder, or a backbone."""

    name: str
    about: str  # what it is for, in --help
    builder: Optional[str] = None  # "module:function" of a built-in network
    backbone: Optional[Backbone] = None


_NETWORKS = (
    Network("cnn", "the Cloud TPU MNIST example's CNN, for small grayscale images",
            builder="modules.networks.small:build_cnn"),
    Network("photo", "an inverted-residual network for photos",
            builder="modules.networks.photo:build_photo"),
    Network("resnet", "a small ResNet", builder="modules.networks.small:build_resnet"),
    # mobilenet_v2.preprocess_input: pixels / 127.5 - 1 ("tf" mode).
    Network("mobilenet_v2", "Keras Applications' MobileNetV2, fine-tuned in two phases",
            backbone=Backbone("MobileNetV2", 1 / 127.5, (-1.0,) * 3, False, "block_13_expand")),
    # EfficientNet rescales and normalizes inside the network: it takes [0, 255].
    Network("efficientnet_b0", "Keras Applications' EfficientNetB0, fine-tuned in two phases",
            backbone=Backbone("EfficientNetB0", 1.0, (0.0,) * 3, False, "block6a_expand_conv")),
    # resnet50.preprocess_input ("caffe" mode): RGB -> BGR, minus ImageNet's BGR mean.
    Network("resnet50", "Keras Applications' ResNet50, fine-tuned in two phases",
            backbone=Backbone("ResNet50", 1.0, (-103.939, -116.779, -123.68), True,
                              "conv5_block1_1_conv")),
)
NETWORKS: Dict[str, Network] = {network.name: network for network in _NETWORKS}
BACKBONE_NAMES = tuple(n.name for n in _NETWORKS if n.backbone is not None)
MODELS = tuple(NETWORKS) + (MODULE,)


def builder(name: str) -> Callable:
    """The build function of built-in network `name` (importing it loads TensorFlow)."""
    module, function = NETWORKS[name].builder.split(":")
    return getattr(importlib.import_module(module), function)


def backbone(name: str) -> Backbone:
    """How backbone `name` is fed and fine-tuned."""
    return NETWORKS[name].backbone


def describe() -> str:
    """Every network, for --model's help."""
    return "; ".join(f"{n.name} ({n.about})" for n in _NETWORKS)
