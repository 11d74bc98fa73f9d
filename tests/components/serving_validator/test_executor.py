"""The serving check's step: a model it refuses is judged; a check that hangs is retried, twice.

Real executors on real files: ImageExampleGen on a tiny image folder with a push
destination (as a compiled run has), then ImageInfraValidator on a real exported
model. The hang is tests/support/faults/sitecustomize.py: the check's worker
process sleeps, as on a broken node, and the check times out.
"""
import os
import shutil

import pytest
from tfx.types import standard_artifacts, standard_component_specs as keys

from components.image_example_gen.novelty import SERVING_DIR_KEY
from components.image_pusher.judged_inputs import (ALERT_PREFIX, INFRASTRUCTURE, MAX_FAILURES,
                                                   GaveUp, last_judged)
from components.image_pusher.refusal import refused
from components.serving_validator.executor import Executor, InfrastructureFailure
from core.contract import NEW_DATA_PROPERTY, NEW_DATA_REASON_PROPERTY
from core.parameters import encode
from settings.config import PipelineConfig
from tests.support.examples import example_gen_properties, run_example_gen
from tests.support.paths import REPO

pytestmark = pytest.mark.integration  # real ingestion, a real serving check's process

FAULTS = REPO / "tests" / "support" / "faults"


def _model(tmp_path, saved_model: str):
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    shutil.copytree(saved_model, os.path.join(model.uri, "Format-Serving"))
    return model


def _check(tmp_path, model, examples, timeout_s: int = 300, name: str = "infra"):
    """ImageInfraValidator's executor; returns its InfraBlessing."""
    blessing = standard_artifacts.InfraBlessing()
    blessing.uri = str(tmp_path / name)
    os.makedirs(blessing.uri, exist_ok=True)
    settings = PipelineConfig.from_values(serving_timeout=timeout_s).serving_check_settings()
    Executor().Do({keys.MODEL_KEY: [model], keys.EXAMPLES_KEY: [examples]},
                  {keys.BLESSING_KEY: [blessing]}, encode(settings))
    return blessing


def test_a_model_that_does_not_load_is_refused_as_the_models_fault(tmp_path, exported_model):
    broken = tmp_path / "broken"
    shutil.copytree(exported_model.model_dir, broken)
    (broken / "saved_model.pb").write_bytes(b"not a SavedModel")
    examples = standard_artifacts.Examples()
    examples.uri = exported_model.examples_uri
    blessing = _check(tmp_path, _model(tmp_path, str(broken)), examples)
    assert blessing.get_int_custom_property("blessed") == 0
    verdict = refused(None, blessing)
    assert verdict.kind == "model"
    assert verdict.reason.startswith("the serving check refused it: the SavedModel did not "
                                     "load"), verdict


def _ingest(tmp_path, data, number: int):
    """ImageExampleGen's executor with a push destination: the record is in serving/."""
    props = example_gen_properties(data, data=str(data), output=str(tmp_path / "out"),
                                   eval_percent=50)
    props[SERVING_DIR_KEY] = str(tmp_path / "serving" / "imagepipe")
    return run_example_gen(tmp_path / f"examples-{number}", props)


def test_a_check_that_hangs_is_retried_until_the_tries_are_spent(tmp_path, exported_model,
                                                                monkeypatch, capsys,
                                                                make_image):
    for index in range(16):
        make_image(tmp_path / "data" / f"c{index % 2}" / f"{index}.png", seed=index)
    model = _model(tmp_path, exported_model.model_dir)
    serving = str(tmp_path / "serving" / "imagepipe")
    monkeypatch.setenv("PYTHONPATH", f"{FAULTS}:{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("IMAGEPIPE_TEST_FAULT", "stall-serving")
    for tries in range(1, MAX_FAILURES + 1):
        examples = _ingest(tmp_path, tmp_path / "data", tries)
        assert examples.get_int_custom_property(NEW_DATA_PROPERTY) == 1
        if tries > 1:  # the run says why it goes ahead on inputs it has seen
            reason = examples.get_string_custom_property(NEW_DATA_REASON_PROPERTY)
            assert reason.startswith("retrying after 1 failed try"), reason
            assert "the serving check timed out" in reason
        with pytest.raises(InfrastructureFailure, match="the serving check timed out"):
            _check(tmp_path, model, examples, timeout_s=3, name=f"infra-{tries}")
        entry = last_judged(serving)
        assert (entry["state"], entry["failures"], entry["verdict"]) == (
            "failed", tries, INFRASTRUCTURE)
        assert not os.listdir(tmp_path / f"infra-{tries}")  # no blessing file of either kind
    capsys.readouterr()
    with pytest.raises(GaveUp):  # the third run gives up, records it, and says so
        _ingest(tmp_path, tmp_path / "data", MAX_FAILURES + 1)
    assert capsys.readouterr().out.startswith(ALERT_PREFIX)
    entry = last_judged(serving)
    assert (entry["state"], entry["verdict"]) == ("judged", INFRASTRUCTURE)
    assert entry["reason"].startswith(f"gave up after {MAX_FAILURES} failed tries")
    skipped = _ingest(tmp_path, tmp_path / "data", MAX_FAILURES + 2)
    assert skipped.get_int_custom_property(NEW_DATA_PROPERTY) == 0
    assert "(infrastructure: gave up after" in skipped.get_string_custom_property(
        NEW_DATA_REASON_PROPERTY)
