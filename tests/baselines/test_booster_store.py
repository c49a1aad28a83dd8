"""The one stored form of a LightGBM booster (graphnorm.baselines.booster_store)."""
import json

import lightgbm as lgb
import numpy as np
import pytest

from graphnorm.baselines.booster_store import StoredBoosterError, as_text, decode, encode


def _booster():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    return lgb.LGBMRegressor(n_estimators=10, verbose=-1).fit(x, x[:, 0]).booster_, x


def test_a_booster_a_rate_and_none_round_trip_through_json():
    booster, x = _booster()
    stored = json.loads(json.dumps([encode(booster), encode(0.25), encode(None)]))
    back = [decode(s) for s in stored]
    assert np.array_equal(back[0].predict(x), booster.predict(x))
    assert back[1:] == [0.25, None] and isinstance(stored[1], float)
    # a per-booster text file, and the bundles written before: a rate as JSON number text
    assert decode(as_text(encode(0.25))) == 0.25 and decode("0.25") == 0.25
    assert np.array_equal(decode(as_text(encode(booster))).predict(x), booster.predict(x))


@pytest.mark.parametrize("bad", ["tree\nversion=v4\nnot a model", ["a list"], "true"])
def test_a_damaged_stored_booster_is_named(bad):
    with pytest.raises(StoredBoosterError, match="gbm.json, target 3"):
        decode(bad, "gbm.json, target 3")
