"""LatestBlessedEarlierDataModelStrategy: the last blessed model not trained on this run's data.

The Trainer's `base_model`. Why not the latest blessed model: on a re-run
with unchanged data, that is the model this data produced last time, which
would change the Trainer's inputs and retrain instead of a cache hit. The
model blessed before the data changed is the same on every re-run of the
same data, so re-runs stay cached; a new span makes the model blessed on the
previous spans the starting point. Revoked blessings (`imagepipe rollback`)
count as the baseline resolver counts them (pick_baseline).
"""
from typing import Dict, List, Sequence, Set

from tfx import types
from tfx.dsl.components.common import resolver

from components.resolvers.latest_blessed_other import BLESSING, MODEL, pick_baseline

EXAMPLES = "examples"  # this run's Examples: models trained on them are skipped


def trained_on(store, models: Sequence[types.Artifact], examples_ids: Set[int]) -> List[int]:
    """Ids of the models whose producing execution read one of `examples_ids`."""
    from ml_metadata.proto import metadata_store_pb2
    event = metadata_store_pb2.Event
    if not models or not examples_ids:
        return []
    outputs = [e for e in store.get_events_by_artifact_ids([m.id for m in models])
               if e.type in (event.OUTPUT, event.DECLARED_OUTPUT)]
    producer = {e.artifact_id: e.execution_id for e in outputs}
    read = {}
    for e in store.get_events_by_execution_ids(sorted(set(producer.values()))):
        if e.type in (event.INPUT, event.DECLARED_INPUT):
            read.setdefault(e.execution_id, set()).add(e.artifact_id)
    return [m for m, execution in producer.items() if read.get(execution, set()) & examples_ids]


class LatestBlessedEarlierDataModelStrategy(resolver.ResolverStrategy):
    """Resolves `model`/`model_blessing` to the latest blessed model not trained on
    `examples`; passes `examples` through."""

    def resolve_artifacts(self, store, input_dict: Dict[str, List[types.Artifact]]):
        """Called by TFX's resolver driver with all Models, all ModelBlessings, the Examples."""
        examples = input_dict.get(EXAMPLES, [])
        models = input_dict.get(MODEL, [])
        skip = trained_on(store, models, {e.id for e in examples})
        result = pick_baseline(models, input_dict.get(BLESSING, []), skip)
        result[EXAMPLES] = examples
        return result
