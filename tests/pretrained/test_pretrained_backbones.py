"""The shipped backbones: installed, readable, and fitting the recipe they were made for."""
import torch

from graphnorm.models import build_model
from graphnorm.pretrained import BACKBONES, pretrained_path
from graphnorm.checkpoints import load_checkpoint
from graphnorm.train.init_from import init_from_checkpoint
from graphnorm.train.model_config import model_config_for
from resolved import resolved


def test_every_backbone_is_installed_without_optimizer_state():
    for name in BACKBONES:
        path = pretrained_path(name)
        raw = torch.load(path, map_location="cpu", weights_only=True)
        assert set(raw) == {"state_dict", "graphnorm", "epoch"}, name
        assert path.stat().st_size < 5_000_000, name  # package data: small enough to install


def test_zinc250k_fits_the_default_command_for_a_table(tmp_path):
    """`train --data T --target-columns Y --init-from zinc250k` and nothing else: the recipe
    builds the backbone's model, plus descriptors at the head; a drift of the small-table
    recipe (preset, norm, options) away from the shipped file fails here."""
    loaded = load_checkpoint(pretrained_path("zinc250k"))
    table = tmp_path / "t.csv"
    table.write_text("smiles,y\nCCO,1.0\nCCN,2.0\n")
    cfg = resolved(["train", "--data", str(table), "--target-columns", "y", "--init-from", "zinc250k"])
    featurizer = cfg.featurizer_config(loaded.featurizer.vocab)
    config = model_config_for(cfg, {"num_tasks": 1}, featurizer)
    model = build_model(config)
    info = init_from_checkpoint(model, config, featurizer, "zinc250k")
    assert info["added_at_head"] == ["descriptors"]
    body = {k: v for k, v in loaded.model.state_dict().items() if not k.startswith("head.")}
    assert info["tensors"] == len(body) > 50
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in body.items())
