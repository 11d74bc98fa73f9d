"""The one registry of networks that `--model` names: adding a network touches this file.

Each entry says what the network is for, where it is built, what the plan gives it for
every setting the user leaves unset (`plan`: pipeline/planning/plan.py applies it) and
what a --tune search varies (`search`: modules/networks/space.py declares it). A built-in
network names its builder, `module:function`, called as
`build(input_shape, num_classes, arch)` and imported only when the network is
built: the flags, the planner and the compiler read this registry without
loading TensorFlow. A Keras Applications backbone carries how imagepipe feeds
and fine-tunes it, and modules/networks/backbones.py builds every one of them.
"""
import dataclasses
import importlib
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

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


Setting = Tuple[Any, str]  # a planned value, and why the plan chose it


@dataclasses.dataclass(frozen=True)
class SideRule:
    """The planned input side: the data's most common side, at most `cap` on the hardware,
    rounded down to a multiple of `multiple` (and never below one multiple)."""

    cap: Mapping[str, int]  # the largest side on "cpu", "gpu" and "tpu"
    multiple: int
    # The reason, str.format'ed with model, hardware, cap, size, side, median and largest;
    # `kept` instead where the size is the data's own side (None: `why` always).
    why: str
    kept: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class SmallSetRule:
    """Up to `max_train` train images the network is `width` wide; above, it trains
    without pad-and-crop or warp. The reasons are formatted with train, max_train, width."""

    max_train: int
    width: float
    small_why: str
    large_why: str


@dataclasses.dataclass(frozen=True)
class PlanDefaults:
    """What the plan gives a network for each setting the user left unset."""

    settings: Mapping[str, Setting]  # every name in PLANNED_SETTINGS
    side: SideRule
    # A pretrained backbone that fine-tunes: these replace some of `settings`.
    pretrained: Mapping[str, Setting] = dataclasses.field(default_factory=dict)
    small_set: Optional[SmallSetRule] = None

    def settings_for(self, fine_tunes: bool) -> Dict[str, Setting]:
        """{setting: (value, why)}, the pretrained ones where the network fine-tunes."""
        return {**self.settings, **(self.pretrained if fine_tunes else {})}


@dataclasses.dataclass(frozen=True)
class Search:
    """What a --tune search varies for a network besides its learning rate."""

    # Fields of modules/networks/space.Architecture: "width", "depth", "dropout",
    # "image_size" (tried where the planned side has smaller ones).
    shape: Tuple[str, ...] = ()
    augment: bool = False  # the augmentation strength, where the plan augments
    fine_tune: bool = False  # a pretrained backbone's fine-tune rate and unfreezing
    # A dropout adds a layer: warm start, which loads by layer position, must know.
    dropout_layer: bool = False


@dataclasses.dataclass(frozen=True)
class Network:
    """A network `--model` can name: a built-in builder, or a backbone."""

    name: str
    about: str  # what it is for, in --help
    builder: Optional[str] = None  # "module:function" of a built-in network
    backbone: Optional[Backbone] = None
    plan: PlanDefaults = dataclasses.field(kw_only=True)
    search: Search = dataclasses.field(kw_only=True)

    def __post_init__(self):
        where = f"network {self.name!r} (modules/network_registry.py)"
        if (self.builder is None) == (self.backbone is None):
            raise ValueError(f"{where}: give it a builder or a backbone (one of them)")
        missing = [name for name in PLANNED_SETTINGS if name not in self.plan.settings]
        if missing:
            raise ValueError(f"{where}: its plan.settings lack {', '.join(missing)}; the "
                             "plan gives every network each of PLANNED_SETTINGS")


# Small grayscale images at most this side get the cnn (pipeline/planning/plan.py), and
# it never trains larger: its Flatten->Dense layer grows with the square of the side.
CNN_MAX_SIDE = 64
# The photo model's largest side per hardware: a CPU epoch costs about the
# square of the side (docs/training.md has the measured trade-off).
PHOTO_SIZE_BY_HARDWARE = {"cpu": 128, "gpu": 192, "tpu": 224}
# A backbone's largest side per hardware (ImageNet weights exist for 96-224 px).
BACKBONE_SIZE_BY_HARDWARE = {"cpu": 128, "gpu": 224, "tpu": 224}
# The cnn's pad-and-crop augmentation only up to this many train images: above,
# the cnn underfit in its planned epochs with it (train accuracy below eval
# accuracy on Fashion-MNIST's 60,000; docs/training.md).
CNN_CROP_MAX_TRAIN = 20_000
# Up to that many train images the cnn is half as wide: on the bundled digits
# it scored within an eval image of the full width at half the time an epoch.
# Fewer epochs instead, or a higher rate, cost about a point (docs/training.md).
CNN_SMALL_WIDTH = 0.5

_THRESHOLD_CNN = ("a working cnn training lands well above it on digits, a failed one "
                  "well below (docs/training.md)")
_THRESHOLD_PHOTO = ("a photo model trained from scratch on a few thousand photos lands "
                    "above it, a failed one below; many or hard classes may need "
                    "--accuracy-threshold (docs/training.md)")
# Early stopping reads the eval split's val_loss and keeps the best epoch's weights,
# so the eval accuracy it ships is of an epoch chosen on the very images it is
# scored on: no plan turns it on.
_CHOSEN_ON_EVAL = ("off: the eval split's val_loss would choose the epoch that the eval "
                   "accuracy then reports")
# Per planned training setting: (value, why) for the cnn, then for the photo model.
_PLAN_ROWS = (
    ("learning_rate", (1e-3, "Adam's usual 1e-3 for the cnn"),
     (2e-3, "2e-3 peak for the photo model (batch norm tolerates it)")),
    ("early_stopping_patience", (0, f"{_CHOSEN_ON_EVAL}; on the digits and Fashion-MNIST "
                                 "the schedule's last epoch scored as well as or better "
                                 "than stopping early (docs/training.md)"),
     (0, f"{_CHOSEN_ON_EVAL}; on flowers the whole schedule scored within the noise "
         "of stopping early (docs/training.md)")),
    ("label_smoothing", (0.0, "none for the cnn"), (0.1, "0.1: photos' labels are noisy")),
    ("augment_crop", (2, "digits and scans: shift by up to 2 px"),
     (0, "resized crops instead")),
    ("augment_rotate", (15.0, "digits and scans: rotate by up to 15 degrees and zoom by up "
                        "to 10%, with the shift, in one warp: on the digits it scored "
                        "about a point above pad-and-crop alone (docs/training.md)"),
     (0.0, "resized crops instead")),
    ("augment_scale", (0.0, "no resized crops for digits"),
     (0.25, "photos: random resized crops keeping >= 25% of the area")),
    ("augment_flip", (False, "no flips: digits and text are not mirror-symmetric"),
     (True, "photos are mirror-symmetric")),
    ("test_flip", (False, "off: digits and text are not mirror-symmetric"),
     (True, "photos are mirror-symmetric; on a validation split carved from flowers' "
            "train split it raised each of four models, +1.7 points on the plan's "
            "(docs/results/2026-11-29-choices-on-validation.md)")),
    ("augment_color", (0.0, "no colour change for grayscale digits"),
     (0.2, "photos: brightness/contrast up to 20%")),
    ("accuracy_threshold", (0.9, _THRESHOLD_CNN), (0.7, _THRESHOLD_PHOTO)),
)
# The settings every network's plan gives a value and a reason (flat config names).
PLANNED_SETTINGS = tuple(name for name, _, _ in _PLAN_ROWS)

CNN_PLAN = PlanDefaults(
    {name: cnn for name, cnn, _ in _PLAN_ROWS},
    SideRule({hardware: CNN_MAX_SIDE for hardware in PHOTO_SIZE_BY_HARDWARE}, 1,
             why="the cnn's Dense layer grows with the image; capped at {size} (most common "
                 "{side} px, median {median})",
             kept="the data's most common side (most common {side} px, median {median})"),
    small_set=SmallSetRule(
        CNN_CROP_MAX_TRAIN, CNN_SMALL_WIDTH,
        small_why="{width:g}: a small set ({train:,} train images, at most {max_train:,}); "
                  "half the filters scored within an eval image of the full cnn on the "
                  "digits, at half the time an epoch (docs/training.md)",
        large_why="none: {train:,} train images are plenty, and with pad-and-crop the cnn "
                  "underfit in its planned epochs (over {max_train:,}); the warp shifts as "
                  "the crop does"))
# Multiples of 32 divide evenly through the photo model's five stride-2 stages.
PHOTO_PLAN = PlanDefaults(
    {name: photo for name, _, photo in _PLAN_ROWS},
    SideRule(PHOTO_SIZE_BY_HARDWARE, 32,
             why="photo model on {hardware}: {cap} px at most (training cost grows with the "
                 "square of the side); data's most common side {side} px, median {median}, "
                 "largest {largest}"))
# From scratch (--weights none) a backbone trains as the photo model does.
BACKBONE_PLAN = PlanDefaults(
    PHOTO_PLAN.settings,
    SideRule(BACKBONE_SIZE_BY_HARDWARE, 32,
             why="{model} on {hardware}: {cap} px at most; data's most common side {side} px"),
    pretrained={
        "learning_rate": (1e-3, "Adam's 1e-3 for the new head; fine-tuning runs at "
                          "FINE_TUNE_LR_FACTOR of it"),
        "early_stopping_patience": (0, f"{_CHOSEN_ON_EVAL}; each phase trains its whole "
                                    "schedule"),
        "accuracy_threshold": (0.8, "pretrained backbones fine-tuned on a few thousand "
                               "photos land well above it (TensorFlow's tutorials: 90-98%); "
                               "a failed load or fine-tune lands below"),
    })
# The built-in networks' shape, and the augmentation strength.
SHAPE_SEARCH = Search(("width", "depth", "dropout", "image_size"), augment=True)
# A backbone's weights are Keras': its learning rates and how much of it phase 2 opens.
BACKBONE_SEARCH = Search(fine_tune=True)

_NETWORKS = (
    Network("cnn", "the Cloud TPU MNIST example's CNN, for small grayscale images",
            builder="modules.networks.small:build_cnn", plan=CNN_PLAN, search=SHAPE_SEARCH),
    Network("photo", "an inverted-residual network for photos",
            builder="modules.networks.photo:build_photo", plan=PHOTO_PLAN,
            search=SHAPE_SEARCH),
    # Its dropout is a layer of its own (the cnn's and the photo model's always exist).
    Network("resnet", "a small ResNet", builder="modules.networks.small:build_resnet",
            plan=PHOTO_PLAN, search=dataclasses.replace(SHAPE_SEARCH, dropout_layer=True)),
    # mobilenet_v2.preprocess_input: pixels / 127.5 - 1 ("tf" mode).
    Network("mobilenet_v2", "Keras Applications' MobileNetV2, fine-tuned in two phases",
            backbone=Backbone("MobileNetV2", 1 / 127.5, (-1.0,) * 3, False, "block_13_expand"),
            plan=BACKBONE_PLAN, search=BACKBONE_SEARCH),
    # EfficientNet rescales and normalizes inside the network: it takes [0, 255].
    Network("efficientnet_b0", "Keras Applications' EfficientNetB0, fine-tuned in two phases",
            backbone=Backbone("EfficientNetB0", 1.0, (0.0,) * 3, False, "block6a_expand_conv"),
            plan=BACKBONE_PLAN, search=BACKBONE_SEARCH),
    # resnet50.preprocess_input ("caffe" mode): RGB -> BGR, minus ImageNet's BGR mean.
    Network("resnet50", "Keras Applications' ResNet50, fine-tuned in two phases",
            backbone=Backbone("ResNet50", 1.0, (-103.939, -116.779, -123.68), True,
                              "conv5_block1_1_conv"),
            plan=BACKBONE_PLAN, search=BACKBONE_SEARCH),
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
