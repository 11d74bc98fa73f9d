"""Process start-up: what must happen before TensorFlow and TFX are imported."""
import functools
import importlib.metadata
import os
import time


_STARTED_AT = None  # when this command began (Unix seconds): prepare() sets it


def command_started() -> float:
    """When the running command began: its `prepare()` (its first step), else now."""
    return _STARTED_AT if _STARTED_AT is not None else time.time()


def prepare() -> None:
    """Keras 2 for TFX/TFT; one scan of the installed packages instead of one per client.

    google-api-core (>= 2.28, required by two Google Cloud clients here)
    checks the Python version when each generated client package is imported,
    and each check calls importlib.metadata.packages_distributions(), which
    reads the metadata of every installed distribution: slow, with hundreds
    installed. A cached `imagepipe run` still makes several such calls through
    the Google Cloud clients TFX imports; `from tfx import v1` (only `compile
    --target vertex` now) adds Vertex AI's. Together they cost seconds of every
    command (measured: docs/performance.md). The mapping cannot change while
    the process runs, so it is computed once.
    """
    global _STARTED_AT
    _STARTED_AT = time.time()  # --time-budget counts the whole command
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    distributions = importlib.metadata.packages_distributions
    if not hasattr(distributions, "cache_info"):
        importlib.metadata.packages_distributions = functools.cache(distributions)
