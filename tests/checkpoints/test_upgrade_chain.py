"""The checkpoint format's one home (graphnorm/checkpoints): the upgrade chain from formats
1-2, the old state-dict key names (only there), and the shipped backbone in the current
format."""
from pathlib import Path

import pytest
import torch
from torch import nn

import graphnorm
from graphnorm.checkpoints import (CHECKPOINT_FORMAT, PRE_CONFIG_SETTINGS, rename_keys,
                                   upgrade_checkpoint, upgrade_keys)
from graphnorm.checkpoints.format import featurizer_of_format_2
from graphnorm.checkpoints.keys import LEGACY_KEYS
from graphnorm.chem import FeaturizerConfig
from graphnorm.nn import TransformerBlock

D, H = 8, 2


def test_rename_keys_matches_whole_components():
    sd = {"m.norm.weight": 1, "m.norm1.weight": 2, "m.norm": 3, "other.norm.weight": 4}
    rename_keys(sd, "m.", {"norm": "transformer.final_norm"})
    assert sd == {"m.transformer.final_norm.weight": 1, "m.norm1.weight": 2,
                  "m.transformer.final_norm": 3, "other.norm.weight": 4}


@pytest.mark.parametrize("old", [
    {"qkv": "attn.qkv", "out": "attn.out", "attn_norm": "attn_norm", "ffn1": "ffn.fc1",
     "ffn2": "ffn.fc2", "ffn_norm": "ffn_norm"},  # Graphormer
    {"norm1": "attn_norm", "attn.qkv": "attn.qkv", "attn.out": "attn.out", "norm2": "ffn_norm",
     "mlp.0": "ffn.fc1", "mlp.2": "ffn.fc2"},  # text
    {"norm1": "attn_norm", "attn.qkv": "attn.qkv", "attn.proj": "attn.out", "norm2": "ffn_norm",
     "mlp.0": "ffn.fc1", "mlp.2": "ffn.fc2"},  # ViT
])
def test_old_block_layouts_load_after_the_upgrade(old):
    """A state dict in each old block layout, nested where a model holds its blocks, loads
    strictly once `upgrade_keys` renamed it; without the upgrade it does not."""
    torch.manual_seed(0)
    new = TransformerBlock(D, H, 16, "sep:bn+ln").state_dict()
    legacy = {}
    for key, value in new.items():
        for o, n in old.items():
            if key.startswith(n + "."):
                legacy["blocks.3." + o + key[len(n):]] = value + 1.0
                break
    assert len(legacy) == len(new)
    holder = nn.Module()
    holder.blocks = nn.ModuleList([nn.Identity()] * 3 + [TransformerBlock(D, H, 16, "sep:bn+ln")])
    if old.get("attn.qkv") is None:  # the Graphormer layout shares no key with today's
        with pytest.raises(RuntimeError, match="Missing key"):
            holder.load_state_dict(dict(legacy))
    holder.load_state_dict(upgrade_keys(holder, legacy))
    for key, value in holder.blocks[3].state_dict().items():
        assert torch.equal(value, new[key] + 1.0), key


def test_old_names_live_only_in_the_checkpoint_package():
    """No model class renames keys itself: the old layouts are `keys.LEGACY_KEYS`'."""
    pkg = Path(graphnorm.__file__).parent
    for path in pkg.rglob("*.py"):
        if path.parent.name == "checkpoints":
            continue
        text = path.read_text()
        assert "_load_from_state_dict" not in text and "rename_keys" not in text, path
    assert set(LEGACY_KEYS) == {"TransformerBlock", "Graphormer", "TextEncoder", "VisionTransformer"}


def _format_1_graphormer():
    """A format-1 checkpoint as the code before the shared core wrote it."""
    from graphnorm.graph import Graphormer, GraphormerConfig

    config = dict(num_layers=2, hidden=8, ffn_hidden=8, heads=2, max_hops=5, max_dist=20,
                  atom_feature_dims=[28], edge_feature_dims=[3])
    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(**config))
    now = model.state_dict()
    old_names = {"transformer.blocks": "blocks", "transformer.final_norm": "final_norm",
                 "attn.qkv": "qkv", "attn.out": "out", "ffn.fc1": "ffn1", "ffn.fc2": "ffn2"}
    state = {}
    for key, value in now.items():
        for new, old in old_names.items():
            key = key.replace(new, old)
        state["model." + key] = value
    state["target_mean"], state["target_std"] = torch.tensor(1.5), torch.tensor(2.0)
    meta = {"format": 1, "version": "0.0.1", "model_config": config,
            "task": {"task_type": "regression", "metric": "mae", "num_tasks": 1},
            "target_mean": 1.5, "target_std": 2.0,
            "featurizer": {"name": "smiles_to_data", "version": 1, "vocab": "zinc", "max_hops": 5}}
    return {"graphnorm": meta, "state_dict": state, "epoch": 3}, model, now


def test_format_1_climbs_the_chain_to_the_current_format():
    ckpt, model, now = _format_1_graphormer()
    upgrade_checkpoint(ckpt, model)
    meta = ckpt["graphnorm"]
    assert meta["format"] == CHECKPOINT_FORMAT
    assert (meta["target_mean"], meta["target_std"]) == ([1.5], [2.0])
    assert FeaturizerConfig.from_dict(meta["featurizer"]) == FeaturizerConfig(vocab="zinc", max_hops=5,
                                                                           max_dist=20, version=1)
    state = ckpt["state_dict"]
    assert state["target_mean"].shape == (1,)
    assert {k[len("model."):] for k in state if k.startswith("model.")} == set(now)
    before = {k: v.clone() for k, v in state.items()}
    upgrade_checkpoint(ckpt, model)  # the current format is a fixed point
    assert all(torch.equal(before[k], v) for k, v in state.items()) and set(before) == set(state)


def test_format_1_loads_with_the_numbers_it_was_saved_with(tmp_path):
    from graphnorm.checkpoints import load_checkpoint

    ckpt, model, now = _format_1_graphormer()
    torch.save(ckpt, tmp_path / "old.ckpt")
    loaded = load_checkpoint(tmp_path / "old.ckpt")
    assert all(torch.equal(loaded.model.state_dict()[k], v) for k, v in now.items())
    assert loaded.target_mean.tolist() == [1.5] and loaded.meta["format"] == CHECKPOINT_FORMAT


def test_old_featurizer_blocks_get_what_they_were_trained_with():
    # format 2 stored name/version/vocab/max_hops/max_dist; earlier ones not even max_dist
    assert PRE_CONFIG_SETTINGS == {"max_hops": 5, "max_dist": 20}  # never changes
    old = {"name": "smiles_to_data", "version": 1, "vocab": "zinc", "max_hops": 5}
    cfg = FeaturizerConfig.from_dict(featurizer_of_format_2(old, {"max_dist": 20, "hidden": 80}))
    assert cfg == FeaturizerConfig(vocab="zinc", max_hops=5, max_dist=20, version=1)
    bare = FeaturizerConfig.from_dict(featurizer_of_format_2({"vocab": "ogb", "version": 1}, {}))
    assert (bare.max_hops, bare.max_dist) == (5, 20)
    hops20 = featurizer_of_format_2({"vocab": "zinc", "version": 1}, {"max_hops": 20})
    assert hops20["max_hops"] == 20  # an old model config says what the data was


def test_the_shipped_backbone_is_in_the_current_format():
    """zinc250k.ckpt needs no upgrade: the chain leaves it as it is, bit for bit, and its
    weights load strictly into the model its block describes."""
    from graphnorm.models import build_model
    from graphnorm.pretrained import pretrained_path

    ckpt = torch.load(pretrained_path("zinc250k"), map_location="cpu", weights_only=True)
    assert ckpt["graphnorm"]["format"] == CHECKPOINT_FORMAT
    model = build_model(ckpt["graphnorm"]["model_config"])
    before = {k: v.clone() for k, v in ckpt["state_dict"].items()}
    meta = dict(ckpt["graphnorm"])
    upgrade_checkpoint(ckpt, model)
    assert ckpt["graphnorm"] == meta and list(ckpt["state_dict"]) == list(before)
    assert all(torch.equal(before[k], v) for k, v in ckpt["state_dict"].items())
    model.load_state_dict({k[len("model."):]: v for k, v in before.items()})  # strict
