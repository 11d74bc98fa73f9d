"""Whether a run's inputs are new: the condition that runs, or skips, the rest of the DAG.

ImageExampleGen always runs; everything after it runs only when this says the
inputs changed since the last run that reached a decision
(components/image_pusher/judged_inputs.py). The inputs' digest covers the data (the
window's fingerprint: every span's files), ImageExampleGen's own settings,
and the compiled pipeline's digest, which `imagepipe compile` sets so that a
changed module file, flag or image is new too. Local runs pass no push
destination, so their inputs are always new: TFX's cache already re-runs only
the steps whose inputs or settings changed (pipeline/dag.py says why).
"""
import hashlib
import json
from typing import Any, Dict, Tuple

from tfx.components.example_gen import utils
from tfx.types.standard_component_specs import INPUT_BASE_KEY

from components.image_pusher import judged_inputs
from core.contract import (INPUTS_DIGEST_PROPERTY, JUDGED_IN_PROPERTY, NEW_DATA_PROPERTY,
                           NEW_DATA_REASON_PROPERTY)
from core.parameters import decode
from components.image_example_gen.options import IngestOptions

SERVING_DIR_KEY = "serving_dir"  # the push destination, where the judged record is
PIPELINE_DIGEST_KEY = "pipeline_digest"  # set by `imagepipe compile`; "" locally


def inputs_digest(fingerprint: str, exec_properties: Dict[str, Any]) -> str:
    """A digest of the data's fingerprint, the reading settings and the pipeline digest."""
    options = decode(IngestOptions, exec_properties)
    settings = {name: getattr(options, name) for name in options.__dataclass_fields__}
    text = json.dumps([fingerprint, exec_properties.get(INPUT_BASE_KEY), settings,
                       exec_properties.get(PIPELINE_DIGEST_KEY) or ""],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def novelty(examples, exec_properties: Dict[str, Any]) -> Tuple[bool, str]:
    """Decides and records on `examples` whether its inputs are new, and why; with a push
    destination, records there that a try on them started (judged_inputs.begin, which
    raises GaveUp once the tries are spent).

    The fingerprint is the driver's, or the one recorded where no driver runs
    (driver.record_input_without_driver, which must have run first).
    """
    fingerprint = (exec_properties.get(utils.FINGERPRINT_PROPERTY_NAME)
                   or examples.get_string_custom_property(utils.FINGERPRINT_PROPERTY_NAME))
    serving_dir = exec_properties.get(SERVING_DIR_KEY)
    if not serving_dir:  # a local run: no digest either, so the Pusher records no judgement
        new, reason = True, "not judged here: the local runner's cache decides"
    else:
        digest = inputs_digest(fingerprint, exec_properties)
        examples.set_string_custom_property(INPUTS_DIGEST_PROPERTY, digest)
        examples.set_string_custom_property(JUDGED_IN_PROPERTY, serving_dir)
        new, reason = judged_inputs.begin(serving_dir, digest, None)
    examples.set_int_custom_property(NEW_DATA_PROPERTY, int(new))
    examples.set_string_custom_property(NEW_DATA_REASON_PROPERTY, reason)
    return new, reason
