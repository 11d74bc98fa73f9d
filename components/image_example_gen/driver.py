"""ImageExampleGen's driver: TFX's FileBasedDriver with a fingerprint that sees renames,
and, for a span pattern, the window resolved once and handed to the executor.

TFX fingerprints only the file count, total bytes and second-resolution
mtimes of the files a glob matches. Moving an image from one class folder to
another (`mv` keeps the mtime) leaves all three unchanged, so the re-run
would be a cache hit with stale labels. This fingerprint hashes every file's
relative path, size and nanosecond mtime instead (span_window.tree_fingerprint).

A span pattern's window (span_window.py) is listed here, once: its
fingerprint is the input fingerprint, and the window itself travels to the
executor as the exec property WINDOW_KEY, so that the executor ingests the
spans, and the files, that the cache key was computed from.
"""
import dataclasses
from typing import Optional, Tuple

from tfx.components.example_gen import driver, utils
from tfx.types import standard_component_specs

from core.parameters import decode
from components.image_example_gen.data_health.groups_csv import groups_digest
from components.image_example_gen import spans
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.formats import manifest_files
from components.image_example_gen.span_window import (SpanWindow, fingerprint_files, resolve,
                                                      tree_fingerprint)

GROUPS_KEY = "groups"  # IngestOptions.groups: its file's content is part of the input
WINDOW_KEY = "span_window"  # the resolved SpanWindow, as JSON


def data_fingerprint(input_base: str, exec_properties) -> str:
    """tree_fingerprint of one dataset; for a manifest, of the manifest and of each image
    it lists (they may be anywhere in its allowed roots, not under one folder)."""
    listed = manifest_files(input_base, decode(IngestOptions, exec_properties))
    return tree_fingerprint(input_base) if listed is None else fingerprint_files(listed)


def input_fingerprint(exec_properties) -> Tuple[str, int, Optional[int], Optional[SpanWindow]]:
    """(fingerprint, span, version, window) of the data a run ingests; the fingerprint
    also covers the --groups file's content (the examples carry the groups, so editing
    the file re-ingests).

    One dataset is span 0, with no window. A span pattern's fingerprint covers
    every span of the window, and its span and version are the newest's: a new
    span, a new version or a changed file is a cache miss, and nothing else is.
    """
    input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
    groups = exec_properties.get(GROUPS_KEY)
    extra = f",groups:{groups_digest(groups)}" if groups else ""
    if not spans.is_pattern(input_base):
        return data_fingerprint(input_base, exec_properties) + extra, 0, None, None
    window = resolve(input_base, decode(IngestOptions, exec_properties))
    return window.fingerprint() + extra, window.newest.number, window.newest.version, window


def record_input_without_driver(examples, exec_properties) -> Optional[SpanWindow]:
    """The span window the driver resolved, or None for one dataset.

    Where the driver never ran, this resolves the window itself, once, and
    records on `examples` what the driver would have: span, version and
    fingerprint. TFX attaches an ExampleGen's driver on Kubeflow only to
    FileBasedExampleGen, and as a `pre_cache_check` hook, which neither
    open-source KFP nor kfp.local runs.
    """
    if exec_properties.get(utils.FINGERPRINT_PROPERTY_NAME):
        text = exec_properties.get(WINDOW_KEY)
        return SpanWindow.from_json(text) if text else None
    fingerprint, span, version, window = input_fingerprint(exec_properties)
    driver.update_output_artifact({
        utils.FINGERPRINT_PROPERTY_NAME: fingerprint,
        utils.SPAN_PROPERTY_NAME: span, utils.VERSION_PROPERTY_NAME: version},
        examples.mlmd_artifact)
    return window


class ImageExampleGenDriver(driver.FileBasedDriver):
    """Resolves exec properties as TFX does, then replaces the input fingerprint."""

    def resolve_exec_properties(self, exec_properties, pipeline_info, component_info):
        """Called by the launcher before the cache lookup.

        A span pattern skips TFX's input processor, which resolves one span
        from a pattern relative to input_base; the window is resolved here.
        """
        input_base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
        if not spans.is_pattern(input_base):
            exec_properties = super().resolve_exec_properties(
                exec_properties, pipeline_info, component_info)
        fingerprint, span, version, window = input_fingerprint(exec_properties)
        exec_properties[utils.FINGERPRINT_PROPERTY_NAME] = fingerprint
        exec_properties[utils.SPAN_PROPERTY_NAME] = span
        exec_properties[utils.VERSION_PROPERTY_NAME] = version
        if window is not None:
            # Without the spans left out (printed as they were found): they are part of
            # the cache key, and a span still arriving would re-run the whole DAG on an
            # unchanged window, a new model from the same data.
            exec_properties[WINDOW_KEY] = dataclasses.replace(window, left_out=()).to_json()
        return exec_properties
