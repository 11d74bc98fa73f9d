"""TFLiteConverter's executor: a model either blessing refused is not converted, and says so."""
import pytest
from tfx.types import standard_artifacts, standard_component_specs as keys

from core.contract import CONVERTED_PROPERTY, REASON_PROPERTY, TFLITE_MODEL_KEY
from core.parameters import encode
from components.tflite_converter import executor
from components.tflite_converter.settings import TFLiteSettings

pytestmark = pytest.mark.integration  # TFX executors on artifacts


def _blessing(kind, blessed: bool):
    artifact = kind()
    artifact.set_int_custom_property("blessed", int(blessed))
    return artifact


@pytest.mark.parametrize("evaluated, served, reason", [
    (False, True, "not converted: the Evaluator did not bless the model"),
    (True, False, "not converted: the model failed the serving check (InfraValidator)")])
def test_a_refused_model_is_not_converted_and_the_output_says_why(tmp_path, evaluated, served,
                                                                  reason):
    output = standard_artifacts.Model()
    output.uri = str(tmp_path / "tflite")
    inputs = {keys.MODEL_BLESSING_KEY: [_blessing(standard_artifacts.ModelBlessing, evaluated)],
              keys.INFRA_BLESSING_KEY: [_blessing(standard_artifacts.InfraBlessing, served)]}
    executor.Executor().Do(inputs, {TFLITE_MODEL_KEY: [output]},
                           encode(TFLiteSettings("digits", "int8", 0.01)))
    assert output.get_int_custom_property(CONVERTED_PROPERTY) == 0
    assert output.get_string_custom_property(REASON_PROPERTY) == reason
    assert not (tmp_path / "tflite").exists()


def test_bad_settings_are_refused_before_any_work():
    with pytest.raises(ValueError, match="--quantize must be one of"):
        TFLiteSettings("digits", "int4", 0.01)
