"""pick_baseline / LatestBlessedOtherModelStrategy: the Evaluator's baseline."""
from tfx.types import standard_artifacts

from components.baseline_resolver import strategy


def _model(model_id):
    model = standard_artifacts.Model()
    model.id = model_id
    return model


def _blessing(model_id, blessed):
    blessing = standard_artifacts.ModelBlessing()
    blessing.set_int_custom_property("current_model_id", model_id)
    blessing.set_int_custom_property("blessed", int(blessed))
    return blessing


def test_newest_blessed_model_wins():
    models = [_model(1), _model(5), _model(3)]
    blessings = [_blessing(1, True), _blessing(3, True), _blessing(5, False)]
    picked = strategy.pick_baseline(models, blessings, exclude_ids=[])
    assert [m.id for m in picked[strategy.MODEL]] == [3]
    assert picked[strategy.BLESSING][0].get_int_custom_property("current_model_id") == 3


def test_candidate_is_never_its_own_baseline():
    models = [_model(1), _model(3)]
    blessings = [_blessing(1, True), _blessing(3, True)]
    picked = strategy.pick_baseline(models, blessings, exclude_ids=[3])
    assert [m.id for m in picked[strategy.MODEL]] == [1]


def test_no_other_blessed_model_means_no_baseline():
    picked = strategy.pick_baseline([_model(3)], [_blessing(3, True)], exclude_ids=[3])
    assert picked == {strategy.MODEL: [], strategy.BLESSING: []}


def test_strategy_passes_the_candidate_through():
    candidate = _model(7)
    resolved = strategy.LatestBlessedOtherModelStrategy().resolve_artifacts(None, {
        strategy.MODEL: [_model(2), candidate],
        strategy.BLESSING: [_blessing(2, True), _blessing(7, True)],
        strategy.CANDIDATE: [candidate]})
    assert [m.id for m in resolved[strategy.MODEL]] == [2]
    assert resolved[strategy.CANDIDATE] == [candidate]
