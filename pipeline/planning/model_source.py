"""Where the run's network comes from: built in, a Keras backbone, or the user's module file.

`read_source` does the file I/O (the module's text, the weights file's
sha256) before the plan; `check_model` builds the network once, before
ingestion, so that a bad module file or weights file exits 2 in seconds,
naming the file, instead of failing in the Trainer after ingestion.
"""
import ast
import dataclasses
import hashlib
import os
from typing import Optional

from core.storage import files
from core.storage.access import check_readable
from core.storage.files import StorageError
from modules.params import BACKBONE_NAMES, MODULE
from settings.config import PipelineConfig
from core.errors import UsageError

IMAGENET, NO_WEIGHTS = "imagenet", "none"


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """summary.json's `model_source`; `text` (the module's source) stays out of it."""

    kind: str  # "builtin", "backbone" or "module_file"
    name: Optional[str]  # the --model; None until planned (builtin)
    path: Optional[str] = None  # the module file
    sha256: Optional[str] = None  # of the module file's text
    weights: Optional[str] = None  # backbones: "imagenet", a file's path, or "none"
    weights_sha256: Optional[str] = None  # of a local weights file
    augment: Optional[bool] = None  # the module file defines augment()
    text: Optional[str] = dataclasses.field(default=None, repr=False)

    def to_json(self) -> dict:
        values = dataclasses.asdict(self)
        values.pop("text")
        return {k: v for k, v in values.items() if v is not None}


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _weights(config: PipelineConfig):
    """(weights, sha256): a local file is made absolute, checked readable and hashed."""
    weights = config.model.weights or IMAGENET
    if weights in (IMAGENET, NO_WEIGHTS):
        return weights, None
    if files.is_remote(weights):  # read by the Trainer; checked here, not downloaded to hash
        try:
            check_readable(weights, "--weights")
        except StorageError:
            check_readable(weights + ".index", "--weights")  # a checkpoint prefix
        return weights, None
    path = os.path.abspath(os.path.expanduser(weights))
    candidates = [p for p in (path, path + ".index") if os.path.isfile(p)]
    if not candidates:
        raise UsageError(f"--weights {weights}: no such file (a Keras weights file of "
                         f"{config.model.network} without its top, 'imagenet' or 'none')")
    try:
        return path, _file_sha256(candidates[0])
    except OSError as e:
        raise UsageError(f"--weights {weights}: cannot be read ({e.strerror})") from None


def _top_level_names(text: str, path: str) -> set:
    """Names the module defines at top level; UsageError (file, line) for a syntax error."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise UsageError(f"--module-file {path}, line {e.lineno}: SyntaxError: {e.msg}") from None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def read_source(config: PipelineConfig) -> ModelSource:
    """The model source the flags name; UsageError for a flag that cannot apply or be read."""
    if config.model.module_file:
        if config.model.network:
            raise UsageError(f"--module-file and --model {config.model.network} both name the "
                             "network: give one")
        from modules.networks import user_module
        path = files.absolute(config.model.module_file)
        try:
            text = user_module.read_source(path)
        except user_module.ModuleFileError as e:
            raise UsageError(str(e)) from None
        return ModelSource("module_file", MODULE, path=path, sha256=user_module.sha256(text),
                           augment="augment" in _top_level_names(text, path), text=text)
    if config.model.network in BACKBONE_NAMES:
        weights, digest = _weights(config)
        return ModelSource("backbone", config.model.network, weights=weights, weights_sha256=digest)
    if config.model.weights:
        raise UsageError(f"--weights applies to the backbones only (--model "
                         f"{'|'.join(BACKBONE_NAMES)}), not to --model "
                         f"{config.model.network or 'planned'}")
    return ModelSource("builtin", config.model.network)


def check_model(params, image_shape, classes: int) -> None:
    """Builds the network as the Trainer will (module file, weights); UsageError if it cannot.

    Keras' ImageNet download lands in its cache (~/.keras/models), where the
    Trainer finds it.
    """
    if params.model != MODULE and not (params.model in BACKBONE_NAMES and params.weights):
        return
    import tf_keras as keras
    from modules.networks import backbones, user_module
    from modules.networks.keras_model import build_model
    try:
        model = build_model(params, image_shape, classes)
        if params.model == MODULE:
            user_module.check_probabilities(model, params.module_file)
    except (user_module.ModuleFileError, backbones.WeightsError) as e:
        raise UsageError(str(e)) from None
    finally:
        keras.backend.clear_session()
