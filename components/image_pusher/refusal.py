"""Why a run pushed or did not, and what the verdict was about: the model or the data.

The Pusher records both on the PushedModel (VERDICT_PROPERTY, VERDICT_REASON_PROPERTY),
where summary.json and kubeflow/run_local.py read them, and in judged.json
(judged_inputs.py). A verdict here is always final: the infrastructure's failures
never reach the Pusher, since the step that met one failed instead
(components/serving_validator/executor.py).

- `data`: the newest span drifted (the Evaluator's veto or the Pusher's gate), or
  the window brings no span newer than a rolled-back model's;
- `model`: the Evaluator's thresholds, the audit's gates or the serving check
  refused the model, or it is a version a rollback took out of service.
"""
import dataclasses
from typing import Optional

from tfx.components.util import model_utils

from core.contract import DRIFT_PROPERTY, REASON_PROPERTY, VETOED_PROPERTY
from components.image_pusher.judged_inputs import DATA, MODEL, PUSHED

NOT_PUSHED = "not pushed: "  # how the drift gate's sentence starts; judged.json adds its own


@dataclasses.dataclass(frozen=True)
class Verdict:
    """`kind` (judged_inputs.PUSHED, MODEL or DATA) and the sentence that says why."""

    kind: str
    reason: str


def refused(evaluator_blessing, infra_blessing) -> Optional[Verdict]:
    """The verdict of the stage that did not bless the model, or None when both did.

    The Evaluator's first: the serving check skips a model it refused.
    """
    if evaluator_blessing is not None and not model_utils.is_model_blessed(evaluator_blessing):
        why = (evaluator_blessing.get_custom_property(VETOED_PROPERTY)
               or evaluator_blessing.get_custom_property(REASON_PROPERTY)
               or "its validation refused it")
        why = why[len(NOT_PUSHED):] if why.startswith(NOT_PUSHED) else why  # the drift gate's
        return Verdict(DATA if _drifted(evaluator_blessing) else MODEL,
                       f"the Evaluator did not bless it: {why}")
    if infra_blessing is not None and not model_utils.is_infra_validated(infra_blessing):
        reason = infra_blessing.get_custom_property(REASON_PROPERTY) or "no reason recorded"
        return Verdict(MODEL, f"the serving check refused it: {reason}")
    return None


def _drifted(blessing) -> bool:
    import json
    recorded = blessing.get_custom_property(DRIFT_PROPERTY)
    return bool(recorded) and json.loads(recorded).get("verdict") == "drift"


def blocked(reason: str, blamed: Optional[str]) -> Verdict:
    """A blessed model the Pusher's own gates held back: drift or a rolled-back window
    (DATA, the default), or a version a rollback took out of service (MODEL)."""
    return Verdict(blamed or DATA, reason)


def pushed(version: int) -> Verdict:
    return Verdict(PUSHED, f"pushed version {version}")
