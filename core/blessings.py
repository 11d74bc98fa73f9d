"""Whether the upstream blessings let a release stage work on the candidate."""
from typing import Dict, List, Optional

from tfx import types
from tfx.components.util import model_utils
from tfx.types import standard_component_specs as keys


def not_blessed(input_dict: Dict[str, List[types.Artifact]]) -> Optional[str]:
    """Why an upstream blessing refused the model, or None (each absent or blessed)."""
    blessing = (input_dict.get(keys.MODEL_BLESSING_KEY) or [None])[0]
    if blessing is not None and not model_utils.is_model_blessed(blessing):
        return "the Evaluator did not bless the model"
    infra = (input_dict.get(keys.INFRA_BLESSING_KEY) or [None])[0]
    if infra is not None and not model_utils.is_infra_validated(infra):
        return "the model failed the serving check (InfraValidator)"
    return None
