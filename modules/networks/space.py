"""What a search may change, per model, and how a trial's values become TrainerParams.

What each network's search varies is its registry entry's `search`
(modules/network_registry.py); the ranges are here. Light on purpose (no
TensorFlow): the Trainer, the model builders and the Tuner read it. Values
travel as one JSON object in TrainerParams' `hyperparameters` (set by the
Trainer from the Tuner's best trial), so a user's module file sees them too
(`params.tuned_values`).
"""
import dataclasses
import json
from typing import Dict, List, Optional

from modules import network_registry
from modules.network_registry import Search
from modules.params import MODULE, TrainerParams

# The learning rate is searched within this factor of the planned one, on a log scale.
LR_SPAN = 3.0
WIDTHS = (0.5, 1.0, 1.5)  # channel multipliers of the built-in models
MAX_EXTRA_DEPTH = 1  # extra blocks per stage (cnn: extra convolutions)
DROPOUT_RANGE = (0.0, 0.5, 0.1)  # low, high, step
# Augmentation strength multiplies the planned crop and colour changes.
STRENGTH_RANGE = (0.0, 1.5, 0.25)
# Image sides tried: the planned side times these, rounded to a multiple of 8,
# never below MIN_SIDE. Smaller than planned only: Transform resizes before the
# model, so a smaller side is a resize inside the model (the cost of decoding
# at the planned side stays).
SIDE_FACTORS = (1.0, 0.75, 0.5)
MIN_SIDE = 32
UNFREEZE_SCALES = (0.5, 1.0, 2.0)  # backbones: layers opened in phase 2, times the planned


@dataclasses.dataclass(frozen=True)
class Architecture:
    """The built-in models' tunable shape; these defaults build the planned model."""

    width: float = 1.0
    depth: int = 0
    dropout: Optional[float] = None  # None: the model's own
    image_size: Optional[int] = None  # None: Transform's side
    unfreeze: float = 1.0


ARCHITECTURE_KEYS = tuple(f.name for f in dataclasses.fields(Architecture))


def sides(planned: int) -> list:
    """The image sides a search tries for a planned side (largest first)."""
    found = []
    for factor in SIDE_FACTORS:
        side = max(MIN_SIDE, int(round(planned * factor / 8)) * 8) if factor < 1 else planned
        if side <= planned and side not in found:
            found.append(side)
    return found


# A module file's network is the user's own: a search tries its training, not its shape.
MODULE_SEARCH = Search(augment=True)


def search_of(model: str) -> Search:
    """What a search varies for `model`: its entry's in modules/network_registry.py."""
    return MODULE_SEARCH if model == MODULE else network_registry.NETWORKS[model].search


def searched(params: TrainerParams, side: int) -> List[str]:
    """The names a search over `params.model` at a planned `side` tries, in order."""
    search, names = search_of(params.model), ["learning_rate"]
    if search.fine_tune and params.fine_tunes:
        names += ["fine_tune_lr_factor", "unfreeze"]
    names += [name for name in search.shape if name != "image_size" or len(sides(side)) > 1]
    return names + (["augment_strength"] if search.augment and augments(params) else [])


def declare(hp, params: TrainerParams, side: int) -> None:
    """Declares on `hp` (a keras_tuner HyperParameters) the space for `params.model`.

    Each default is the plan's value: the oracle places the search's first trial, run
    with the plan's own settings, there. Dropout's is the range's low end, not every
    model's own (the trial itself builds the model's own).
    """
    lr, f = params.learning_rate, params.fine_tune_lr_factor
    makers = {
        "learning_rate": lambda: hp.Float("learning_rate", lr / LR_SPAN, lr * LR_SPAN,
                                          sampling="log", default=lr),
        "fine_tune_lr_factor": lambda: hp.Float("fine_tune_lr_factor", f / LR_SPAN,
                                                min(1.0, f * LR_SPAN), sampling="log",
                                                default=f),
        "unfreeze": lambda: hp.Choice("unfreeze", list(UNFREEZE_SCALES), default=1.0),
        "width": lambda: hp.Choice("width", list(WIDTHS), default=(
            params.model_width if params.model_width in WIDTHS else 1.0)),
        "depth": lambda: hp.Int("depth", 0, MAX_EXTRA_DEPTH, default=0),
        "dropout": lambda: hp.Float("dropout", *DROPOUT_RANGE[:2], step=DROPOUT_RANGE[2]),
        "image_size": lambda: hp.Choice("image_size", sides(side), default=side),
        "augment_strength": lambda: hp.Float("augment_strength", *STRENGTH_RANGE[:2],
                                             step=STRENGTH_RANGE[2], default=1.0),
    }
    for name in searched(params, side):
        makers[name]()


def largest(params: TrainerParams, side: int) -> Dict:
    """The values of the largest model a search over `params.model` may build (widest,
    deepest; sides are never above the planned one); {} when it searches no shape."""
    names = searched(params, side)
    return {**({"width": max(WIDTHS)} if "width" in names else {}),
            **({"depth": MAX_EXTRA_DEPTH} if "depth" in names else {})}


def augments(params: TrainerParams) -> bool:
    """Whether the plan augments with something a strength can scale."""
    return (params.augment_scale > 0 or params.augment_color > 0 or params.augment_crop > 0
            or params.augment_rotate > 0)


def apply(params: TrainerParams, values: Dict) -> TrainerParams:
    """`params` with a trial's (or the best trial's) values: the training settings
    they name replaced, and all of them kept as `hyperparameters` for the model."""
    changes = {"hyperparameters": json.dumps(values, sort_keys=True)}
    for name in ("learning_rate", "fine_tune_lr_factor"):
        if name in values:
            changes[name] = float(values[name])
    if "augment_strength" in values:
        strength = float(values["augment_strength"])
        changes.update(
            augment_color=params.augment_color * strength,
            augment_crop=int(round(params.augment_crop * strength)),
            augment_rotate=params.augment_rotate * strength,
            # the area a crop may drop scales; a crop keeps at least 5%
            augment_scale=(max(0.05, 1 - (1 - params.augment_scale) * strength)
                           if params.augment_scale > 0 and strength > 0 else 0.0))
    return dataclasses.replace(params, **changes)


def architecture(params: TrainerParams) -> Architecture:
    """The shape the tuned values ask for; the planned model's (its width) when untuned."""
    values = params.tuned_values
    known = {key: values[key] for key in ARCHITECTURE_KEYS if key in values}
    return Architecture(**{"width": params.model_width, **known})


def weights_key(params: TrainerParams) -> Optional[dict]:
    """What of the tuned values decides which weights a model has, and where: warm start
    loads by layer position (modules/training/warm_start.py). None when untuned, or when
    nothing tuned changes the weights (learning rates, a backbone's unfreezing)."""
    values = params.tuned_values
    if params.model == MODULE:
        return dict(values) or None  # the module's build_model may read any of them
    search = search_of(params.model)
    if not search.shape:
        return None  # a backbone: a search changes its training alone
    if not values and params.model_width == 1.0:
        return None  # the model as it has always been planned
    arch = architecture(params)
    key = {"width": arch.width, "depth": arch.depth, "image_size": arch.image_size}
    if search.dropout_layer:
        key["dropout_layer"] = bool(arch.dropout)  # a dropout is a layer of its own
    return key
