"""FeaturizerConfig: one definition of the settings data and model share."""
import pytest

from graphnorm.chem import FEATURIZER_VERSION, FeaturizerConfig, vocab_dims
from graphnorm.train.config import TrainConfig


def test_defaults_round_trip_and_validation():
    cfg = FeaturizerConfig(vocab="zinc", max_hops=20)
    assert cfg.to_dict() == {"vocab": "zinc", "max_hops": 20, "max_dist": 20,
                             "version": FEATURIZER_VERSION}
    assert FeaturizerConfig.from_dict(cfg.to_dict()) == cfg and cfg.tag == "h20-d20"
    assert cfg.feature_dims == vocab_dims("zinc") == ((28,), (3,))
    with pytest.raises(ValueError, match="unknown featurizer keys \\['hops'\\]"):
        FeaturizerConfig.from_dict({"hops": 3})
    with pytest.raises(ValueError, match="max_dist must be in \\[0, 254\\]"):
        FeaturizerConfig(max_dist=255)
    with pytest.raises(ValueError, match="vocab must be one of"):
        FeaturizerConfig(vocab="smiles")
    with pytest.raises(ValueError, match="max_hops must be an integer"):
        FeaturizerConfig(max_hops=2.5)


def test_another_version_is_refused_naming_both():
    with pytest.raises(ValueError, match=f"featurizer version 99, this graphnorm has version "
                                         f"{FEATURIZER_VERSION}"):
        FeaturizerConfig(version=99).check_current("checkpoint x.ckpt")


def test_train_config_carries_one_featurizer():
    cfg = TrainConfig(featurizer={"max_hops": 20})
    assert cfg.featurizer_config("zinc") == FeaturizerConfig(vocab="zinc", max_hops=20)
    assert TrainConfig().featurizer_config("ogb") == FeaturizerConfig()
    # configs before `featurizer:` (YAML, metrics.json) had top-level max_hops
    legacy = TrainConfig.from_dict({"max_hops": 3, "max_dist": 9})
    assert legacy.featurizer == {"max_hops": 3, "max_dist": 9}
    with pytest.raises(ValueError, match="max_hops is given twice"):
        TrainConfig.from_dict({"max_hops": 3, "featurizer": {"max_hops": 4}})
    with pytest.raises(ValueError, match="conflicts with the data's vocab 'zinc'"):
        TrainConfig(featurizer={"vocab": "ogb"}).featurizer_config("zinc")
