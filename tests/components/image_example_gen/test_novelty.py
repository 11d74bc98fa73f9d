"""novelty: whether ImageExampleGen's inputs are new, recorded on its Examples artifact."""
from tfx.components.example_gen import utils
from tfx.types import standard_artifacts

from core.contract import (INPUTS_DIGEST_PROPERTY, NEW_DATA_PROPERTY,
                           NEW_DATA_REASON_PROPERTY)
from components.image_pusher.judged_inputs import PUSHED, record_judged
from core.parameters import encode
from components.image_example_gen.novelty import (PIPELINE_DIGEST_KEY, SERVING_DIR_KEY,
                                                  inputs_digest, novelty)
from settings.config import PipelineConfig


def _properties(tmp_path, **changes) -> dict:
    config = PipelineConfig.from_values(data=str(tmp_path / "span-{SPAN}"),
                                        output=str(tmp_path / "out"))
    return {"input_base": config.ingest.data,
            utils.FINGERPRINT_PROPERTY_NAME: "spans:1,sha256:aa",
            SERVING_DIR_KEY: config.serving_dir, PIPELINE_DIGEST_KEY: "",
            **encode(config.ingest_options()), **changes}


def test_first_inputs_are_new_and_recorded_on_the_artifact(tmp_path):
    examples = standard_artifacts.Examples()
    new, _ = novelty(examples, _properties(tmp_path))
    assert new and examples.get_int_custom_property(NEW_DATA_PROPERTY) == 1
    assert len(examples.get_string_custom_property(INPUTS_DIGEST_PROPERTY)) == 64


def test_judged_inputs_are_not_new(tmp_path):
    properties = _properties(tmp_path)
    digest = inputs_digest(properties[utils.FINGERPRINT_PROPERTY_NAME], properties)
    record_judged(properties[SERVING_DIR_KEY], digest, "1", PUSHED, "pushed version 1", 1)
    examples = standard_artifacts.Examples()
    new, reason = novelty(examples, properties)
    assert not new and examples.get_int_custom_property(NEW_DATA_PROPERTY) == 0
    assert examples.get_string_custom_property(NEW_DATA_REASON_PROPERTY) == reason
    assert reason.startswith("no new data: spans 1")


def test_new_files_settings_or_package_change_the_digest(tmp_path):
    base = _properties(tmp_path)
    digest = inputs_digest("spans:1,sha256:aa", base)
    assert inputs_digest("spans:1,2,sha256:bb", base) != digest
    assert inputs_digest("spans:1,sha256:aa", {**base, "eval_percent": 30}) != digest
    assert inputs_digest("spans:1,sha256:aa", {**base, PIPELINE_DIGEST_KEY: "f00"}) != digest
    # Where the judged record lives is not an input of the model.
    assert inputs_digest("spans:1,sha256:aa", {**base, "span_window": "{}"}) == digest


def test_without_a_push_destination_every_run_is_new(tmp_path):
    examples = standard_artifacts.Examples()
    properties = _properties(tmp_path, **{SERVING_DIR_KEY: None})
    assert novelty(examples, properties) == (
        True, "not judged here: the local runner's cache decides")
    # No digest: the Pusher of a local run writes no judged record (nothing reads one).
    assert not examples.has_custom_property(INPUTS_DIGEST_PROPERTY)
