"""LatestBlessedOtherModelStrategy: TFX's LatestBlessedModelStrategy, minus the candidate.

Why not the stock strategy: on an identical re-run the Trainer is a cache hit,
so the candidate *is* the model blessed last time. The stock strategy then
hands the candidate to the Evaluator as its own baseline. That changes the
Evaluator's inputs (so it and the Pusher can never be cache hits), compares a
model with itself, and pushes the same model again as a new serving version.
Excluding the candidate keeps a re-run fully cached and a new model still
compared with the last blessed one.

Rollbacks: `imagepipe rollback` (rollback/rollback.py) records a
ModelBlessing with `blessed` 0 and `revoked` 1 for each model it takes out of
service, and one with `blessed` 1 and `revoked` 0 for a rolled-back model it
serves again. A model's latest blessing by artifact id decides, except that a
revocation stands until a later rollback lifts it: the Evaluator blessing a
revoked model again (a cached Trainer, a new baseline) does not make it the
baseline, since it is not served.
"""
from typing import Dict, List, Sequence

from tfx import types
from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import (
    LatestBlessedModelStrategy,
)

# Resolver input keys. MODEL and BLESSING are all artifacts of those types;
# CANDIDATE is the Trainer's output of this run.
MODEL, BLESSING, CANDIDATE = "model", "model_blessing", "candidate"
# The Evaluator's custom properties on a ModelBlessing (TFX's names).
CURRENT_MODEL_ID, BLESSED = "current_model_id", "blessed"
# On the ModelBlessings a rollback records: 1 takes the model out of service, 0 restores it.
REVOKED = "revoked"


def standing_blessings(blessings: Sequence[types.Artifact]) -> Dict[int, types.Artifact]:
    """{model id: the blessing that stands for it}, for the models whose blessing stands.

    In artifact id order (then as given), each blessing replaces the one before;
    while a rollback's latest verdict on a model is a revocation, the
    Evaluator's blessings of it do not count.
    """
    ordered = [b for _, b in sorted(enumerate(blessings), key=lambda e: (e[1].id, e[0]))]
    standing, revoked = {}, set()
    for blessing in ordered:
        model_id = blessing.get_int_custom_property(CURRENT_MODEL_ID)
        if blessing.has_custom_property(REVOKED):
            if blessing.get_int_custom_property(REVOKED) == 1:
                revoked.add(model_id)
            else:
                revoked.discard(model_id)
        elif model_id in revoked:
            continue
        if blessing.get_int_custom_property(BLESSED) == 1:
            standing[model_id] = blessing
        else:
            standing.pop(model_id, None)
    return standing


def pick_baseline(models: Sequence[types.Artifact], blessings: Sequence[types.Artifact],
                  exclude_ids: Sequence[int]) -> Dict[str, List[types.Artifact]]:
    """The newest model whose blessing stands (and that blessing), its id not excluded."""
    blessed = standing_blessings(blessings)
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
