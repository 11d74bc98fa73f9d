"""ImageExampleGen's driver: TFX's FileBasedDriver with a fingerprint that sees renames.

TFX fingerprints only the file count, total bytes and second-resolution
mtimes of the files a glob matches. Moving an image from one class folder to
another (`mv` keeps the mtime) leaves all three unchanged, so the re-run
would be a cache hit with stale labels. This fingerprint hashes every file's
relative path, size and nanosecond mtime instead.
"""
import dataclasses
import hashlib
import os
from typing import Optional, Tuple

from tfx.components.example_gen import driver, utils
from tfx.types import standard_component_specs

from components.image_example_gen.data_health.groups_csv import groups_digest
from components.image_example_gen import spans
from components.common.storage import files

TRAIN_SPANS_KEY = "train_spans"  # IngestOptions.train_spans, as its exec property
GROUPS_KEY = "groups"  # IngestOptions.groups: its file's content is part of the input


def tree_fingerprint(root: str) -> str:
    """A digest of (relative path, size, mtime ns) of every file under `root` (or of root)."""
    digest = hashlib.sha256()
    if not files.isdir(root):
        found = [dataclasses.replace(files.stat(root), path=os.path.basename(root))]
    else:  # one listing with sizes and times; on a bucket, no request per object
        found = [dataclasses.replace(f, path=os.path.relpath(f.path, root))
                 for f in files.walk_files(root)]
    for info in found:
        digest.update(f"{info.path}\0{info.size}\0{info.mtime_ns}\n".encode("utf-8", "replace"))
    return f"files:{len(found)},sha256:{digest.hexdigest()}"


def input_fingerprint(input_base: str, train_spans: int,
                      groups: Optional[str] = None) -> Tuple[str, int, Optional[int]]:
    """(fingerprint, span, version) of the data a run ingests, and its --groups file's
    content (the examples carry the groups, so editing the file re-ingests).

    One dataset is span 0. A span pattern's fingerprint covers every span of
    the window (spans.window), and its span and version are the newest's: a
    new span, a new version or a changed file is a cache miss, and nothing
    else is.
    """
    extra = f",groups:{groups_digest(groups)}" if groups else ""
    if not spans.is_pattern(input_base):
        return tree_fingerprint(input_base) + extra, 0, None
    window = spans.window(input_base, train_spans)
    digest = hashlib.sha256("".join(
        f"{s.number}\0{s.version}\0{tree_fingerprint(s.root)}\n" for s in window).encode())
    return (f"spans:{','.join(str(s.number) for s in window)},sha256:{digest.hexdigest()}"
            + extra,
            window[-1].number, window[-1].version)


def record_input_without_driver(examples, exec_properties) -> None:
    """What the driver would have recorded on `examples`: span, version and fingerprint.

    For orchestrators that never run the driver: TFX attaches an ExampleGen's
    driver on Kubeflow only to FileBasedExampleGen, and as a `pre_cache_check`
    hook, which neither open-source KFP nor kfp.local runs. No-op when the
    driver did run (its fingerprint is in `exec_properties`).
    """
    if exec_properties.get(utils.FINGERPRINT_PROPERTY_NAME):
        return
    fingerprint, span, version = input_fingerprint(
        exec_properties[standard_component_specs.INPUT_BASE_KEY],
        int(exec_properties.get(TRAIN_SPANS_KEY) or 0), exec_properties.get(GROUPS_KEY))
    driver.update_output_artifact({
        utils.FINGERPRINT_PROPERTY_NAME: fingerprint,
        utils.SPAN_PROPERTY_NAME: span, utils.VERSION_PROPERTY_NAME: version},
        examples.mlmd_artifact)


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
        fingerprint, span, version = input_fingerprint(
            input_base, int(exec_properties.get(TRAIN_SPANS_KEY) or 0),
            exec_properties.get(GROUPS_KEY))
        exec_properties[utils.FINGERPRINT_PROPERTY_NAME] = fingerprint
        exec_properties[utils.SPAN_PROPERTY_NAME] = span
        exec_properties[utils.VERSION_PROPERTY_NAME] = version
        return exec_properties
