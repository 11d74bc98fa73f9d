"""LatestBlessedOtherModelStrategy: TFX's LatestBlessedModelStrategy, minus the candidate.

Why not the stock strategy: on an identical re-run the Trainer is a cache hit,
so the candidate *is* the model blessed last time. The stock strategy then
hands the candidate to the Evaluator as its own baseline. That changes the
Evaluator's inputs (so it and the Pusher can never be cache hits), compares a
model with itself, and pushes the same model again as a new serving version.
Excluding the candidate keeps a re-run fully cached and a new model still
compared with the last blessed one.
"""
from typing import Dict, List, Sequence

from tfx import types
from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import (
    LatestBlessedModelStrategy,
)

# Resolver input keys. MODEL and BLESSING are all artifacts of those types;
# CANDIDATE is the Trainer's output of this run.
MODEL, BLESSING, CANDIDATE = "model", "model_blessing", "candidate"
_CURRENT_MODEL_ID, _BLESSED = "current_model_id", "blessed"


def pick_baseline(models: Sequence[types.Artifact], blessings: Sequence[types.Artifact],
                  exclude_ids: Sequence[int]) -> Dict[str, List[types.Artifact]]:
    """The newest blessed model (and its blessing) whose id is not excluded."""
    blessed = {b.get_int_custom_property(_CURRENT_MODEL_ID): b for b in blessings
               if b.get_int_custom_property(_BLESSED) == 1}
    for model in sorted(models, key=lambda m: m.id, reverse=True):
        if model.id in blessed and model.id not in exclude_ids:
            return {MODEL: [model], BLESSING: [blessed[model.id]]}
    return {MODEL: [], BLESSING: []}


class LatestBlessedOtherModelStrategy(LatestBlessedModelStrategy):
    """Resolves `model`/`model_blessing` to the latest blessed model that is not `candidate`."""

    def resolve_artifacts(self, store, input_dict: Dict[str, List[types.Artifact]]):
        """Called by TFX's resolver driver with all Models, all ModelBlessings, the candidate."""
        candidates = input_dict.get(CANDIDATE, [])
        result = pick_baseline(input_dict.get(MODEL, []), input_dict.get(BLESSING, []),
                               [c.id for c in candidates])
        result[CANDIDATE] = candidates
        return result
