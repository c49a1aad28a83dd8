"""GINE / GIN-VN baselines (graphnorm.baselines) and the model registry (graphnorm.models)."""
import pytest
import torch
from torch_geometric.nn import global_add_pool

from graphnorm.baselines import GNN, GNNConfig
from graphnorm.chem import FeaturizerConfig, smiles_to_data
from graphnorm.graph import collate_graphs
from graphnorm.models import build_model, split_model_config
from graphnorm.train.config import TrainConfig
from graphnorm.train.model_config import model_config_for

ZINC = {"vocab": "zinc", "num_tasks": 1}

MOLS = ["CC(=O)Nc1ccc(O)cc1", "C1CCCCCCCCCCC1", "CCN(CC)CCOC(=O)c1ccccc1N", "O=C1CCCN1",
        "C[NH3+].[O-]C(=O)c1ccccc1"]


@pytest.fixture(scope="module")
def graphs():
    return [smiles_to_data(s, vocab="zinc") for s in MOLS]


def _warm(model, graphs):
    model.train()
    for _ in range(3):  # BN running statistics away from their defaults
        model(collate_graphs(graphs))
    return model.eval()


@pytest.mark.parametrize("kind", ["gine", "gin-vn"])
def test_batch_equals_alone_and_trains(graphs, kind):
    torch.manual_seed(0)
    model = GNN(GNNConfig(kind=kind, num_layers=3, hidden=16))
    out = model(collate_graphs(graphs))
    out.sum().backward()
    assert out.shape == (5, 1) and all(p.grad is not None for p in model.parameters() if p.requires_grad)
    _warm(model, graphs)
    with torch.no_grad():
        together = model(collate_graphs(graphs))
        alone = torch.cat([model(collate_graphs([g])) for g in graphs])
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=0)
    assert together.std() > 0


def test_sum_pool_is_pyg_global_add_pool(graphs):
    torch.manual_seed(0)
    model = _warm(GNN(GNNConfig(kind="gine", num_layers=2, hidden=8)), graphs)
    batch = collate_graphs(graphs)
    with torch.no_grad():
        h, graph_of = model._nodes(batch)
        emb = model.encode(batch)
    torch.testing.assert_close(emb.vnode, global_add_pool(h, graph_of))
    assert emb.tokens.shape[:2] == batch.node_mask.shape


def test_virtual_node_changes_the_model(graphs):
    torch.manual_seed(0)
    a = GNN(GNNConfig(kind="gine", num_layers=2, hidden=8))
    b = GNN(GNNConfig(kind="gin-vn", num_layers=2, hidden=8))
    assert b.num_parameters() > a.num_parameters()


def test_registry_round_trip_and_errors():
    cfg = TrainConfig(model_name="gin-vn", preset="tiny", readout="mean")
    mc = model_config_for(cfg, {"vocab": "ogb", "num_tasks": 1}, FeaturizerConfig(vocab="ogb"))
    assert mc["model"] == "gin-vn" and mc["pool"] == "mean" and mc["num_layers"] == 2
    model = build_model(mc)
    assert isinstance(model, GNN) and model.config.kind == "gin-vn"
    assert split_model_config({"hidden": 8})[0] == "graphormer"  # old checkpoints
    with pytest.raises(ValueError, match="choose from graphormer, gine, gin-vn"):
        build_model({"model": "gat"})
    with pytest.raises(ValueError, match=r"overrides \['heads'\] do not apply to model gine"):
        model_config_for(TrainConfig(model_name="gine", model={"heads": 4}), ZINC, FeaturizerConfig(vocab="zinc"))
    with pytest.raises(ValueError, match="unknown preset 'slim' for model gine"):
        model_config_for(TrainConfig(model_name="gine", preset="slim"), ZINC, FeaturizerConfig(vocab="zinc"))


def test_checkpoint_from_before_the_registry_loads(tmp_path):
    """A checkpoint whose model config has no "model" key nor the new Graphormer options
    (written before baselines and structural options existed) loads as the same Graphormer."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.graph import Graphormer, GraphormerConfig

    torch.manual_seed(0)
    model = Graphormer(GraphormerConfig(num_layers=1, hidden=16, ffn_hidden=16, heads=4))
    old = model.config.to_dict()
    for key in ("readout", "rwpe_steps", "local_mp"):
        old.pop(key)
    meta = {"format": 1, "version": "0.1.0", "model_config": old,
            "task": {"task_type": "regression", "metric": "mae", "vocab": "zinc", "num_tasks": 1},
            "train_config": {}, "target_mean": 0.0, "target_std": 1.0,
            "featurizer": {"name": "smiles_to_data", "version": 1, "vocab": "zinc", "max_hops": 5}}
    state = {f"model.{k}": v for k, v in model.state_dict().items()}
    torch.save({"graphnorm": meta, "state_dict": state, "epoch": 3}, tmp_path / "old.ckpt")
    loaded = load_checkpoint(tmp_path / "old.ckpt")
    batch = collate_graphs([smiles_to_data("CCO", vocab="zinc")])
    with torch.no_grad():
        torch.testing.assert_close(loaded.model(batch), model.eval()(batch))
