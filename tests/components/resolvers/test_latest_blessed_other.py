"""pick_baseline / LatestBlessedOtherModelStrategy: the Evaluator's baseline."""
from tfx.types import standard_artifacts

from components.resolvers import latest_blessed_other as strategy


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


def _verdict(blessing_id, model_id, revoked):
    """A rollback's blessing (rollback/revocations.py)."""
    blessing = _blessing(model_id, not revoked)
    blessing.id = blessing_id
    blessing.set_int_custom_property(strategy.REVOKED, int(revoked))
    return blessing


def _with_id(blessing, blessing_id):
    blessing.id = blessing_id
    return blessing


def test_a_revoked_model_is_no_baseline_so_the_served_one_before_it_is():
    models = [_model(1), _model(3)]
    blessings = [_with_id(_blessing(1, True), 10), _with_id(_blessing(3, True), 11),
                 _verdict(12, 3, revoked=True)]
    picked = strategy.pick_baseline(models, blessings, exclude_ids=[])
    assert [m.id for m in picked[strategy.MODEL]] == [1]


def test_the_latest_blessing_by_id_decides_whatever_the_order_given():
    blessings = [_with_id(_blessing(3, False), 20), _with_id(_blessing(3, True), 11)]
    assert strategy.standing_blessings(blessings) == {}


def test_the_evaluator_blessing_a_revoked_model_again_does_not_bring_it_back():
    # A cached Trainer hands the revoked model to the Evaluator again, which may bless it;
    # it is still not served, so still no baseline.
    blessings = [_with_id(_blessing(3, True), 11), _verdict(12, 3, revoked=True),
                 _with_id(_blessing(3, True), 13)]
    assert strategy.standing_blessings(blessings) == {}


def test_a_rollback_that_serves_a_revoked_model_again_restores_it():
    blessings = [_with_id(_blessing(3, True), 11), _verdict(12, 3, revoked=True),
                 _verdict(14, 3, revoked=False)]
    assert [b.id for b in strategy.standing_blessings(blessings).values()] == [14]
