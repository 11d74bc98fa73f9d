"""Process start-up: what must happen before TensorFlow and TFX are imported."""
import functools
import importlib.metadata
import os


def prepare() -> None:
    """Keras 2 for TFX/TFT; one scan of the installed packages instead of fifteen.

    google-api-core (>= 2.28, required by two Google Cloud clients here) checks
    the Python version when each generated client package is imported, and
    each check calls importlib.metadata.packages_distributions(), which reads
    the metadata of every installed distribution (~0.2 s for this
    environment's ~300). A cached `imagepipe run` still makes 4 such calls
    through the Google Cloud clients TFX imports; `from tfx import v1` (only
    `compile --target vertex` now) adds Vertex AI's, 15 calls in all, ~2.5 s
    on 2 cores. The mapping cannot change while the process runs, so it is
    computed once.
    """
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    distributions = importlib.metadata.packages_distributions
    if not hasattr(distributions, "cache_info"):
        importlib.metadata.packages_distributions = functools.cache(distributions)
