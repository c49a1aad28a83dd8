"""Model configs of training runs: presets (defined once in graphnorm.models) and the
featurizer's sizes, which a `model:` override may not contradict."""
import pytest

from graphnorm.chem import FeaturizerConfig
from graphnorm.graph import GraphormerConfig
from graphnorm.models import PRESETS, preset_fields, presets_help
from graphnorm.train.config import TrainConfig
from graphnorm.train.model_config import model_config_for

ZINC = {"vocab": "zinc", "num_tasks": 1}


def test_model_sizes_come_from_the_featurizer():
    mc = model_config_for(TrainConfig(), ZINC, FeaturizerConfig(vocab="zinc", max_hops=20, max_dist=9))
    assert (mc["max_hops"], mc["max_dist"]) == (20, 9)
    assert mc["atom_feature_dims"] == [28] and mc["edge_feature_dims"] == [3]


def test_conflicting_model_override_is_refused_with_a_clear_message():
    cfg = TrainConfig(model={"max_hops": 3})
    with pytest.raises(ValueError) as err:
        model_config_for(cfg, ZINC, FeaturizerConfig(vocab="zinc"))
    msg = str(err.value)
    assert "model override max_hops=3 conflicts with the featurizer's max_hops=5" in msg
    assert "featurizer: {max_hops: 3}" in msg
    with pytest.raises(ValueError, match="edge_feature_dims.*follows the dataset's vocabulary"):
        model_config_for(TrainConfig(model={"edge_feature_dims": [5]}), ZINC,
                         FeaturizerConfig(vocab="zinc"))
    agreeing = TrainConfig(model={"max_hops": 5})  # saying the same is harmless
    assert model_config_for(agreeing, ZINC, FeaturizerConfig(vocab="zinc"))["max_hops"] == 5


def test_slim_is_defined_once_as_the_config_defaults():
    slim = model_config_for(TrainConfig(preset="slim"), ZINC, FeaturizerConfig(vocab="zinc"))
    default = GraphormerConfig()
    assert preset_fields("graphormer", None) == {}  # slim = GraphormerConfig's defaults
    assert (slim["num_layers"], slim["hidden"], slim["ffn_hidden"], slim["heads"]) == \
        (default.num_layers, default.hidden, default.ffn_hidden, default.heads) == (12, 80, 80, 8)
    small = model_config_for(TrainConfig(preset="small"), ZINC, FeaturizerConfig(vocab="zinc"))
    assert small["num_layers"] == PRESETS["graphormer"]["small"]["num_layers"]
    assert presets_help() == "graphormer slim (default) | small | fast | tiny; gine/gin-vn base (default) | tiny"
    assert presets_help(mark_default=False) == "graphormer slim | small | fast | tiny; gine/gin-vn base | tiny"
