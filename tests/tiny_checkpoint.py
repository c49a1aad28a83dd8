"""Hand-built checkpoints (random weights, no training, no data) in the format that
`graphnorm.checkpoints.load_checkpoint` reads: for the explain and serve tests, in milliseconds."""
from pathlib import Path

import torch

# regression head outputs are ~0 at init; scaled up so that predictions and attributions
# are far from rounding noise
HEAD_SCALE = 50.0


def write_checkpoint(path, model: str = "graphormer", targets=("logp",), task_type: str = "regression",
                     vocab: str = "zinc", seed: int = 0, **fields) -> Path:
    """A best.ckpt of an untrained ``model`` (graphormer | gine | gin-vn) at ``path``."""
    from graphnorm.checkpoints import graphnorm_block
    from graphnorm.chem import FeaturizerConfig
    from graphnorm.models import build_model

    featurizer = FeaturizerConfig(vocab=vocab, max_hops=3, max_dist=8)
    atom_dims, bond_dims = featurizer.feature_dims
    config = {"model": model, "num_tasks": len(targets), "atom_feature_dims": list(atom_dims),
              "edge_feature_dims": list(bond_dims)}
    if model == "graphormer":
        config.update(num_layers=2, hidden=16, ffn_hidden=16, heads=4, max_hops=3, max_dist=8,
                      dropout=0.0, attention_dropout=0.0, norm="sep:bn+ln")
    else:
        config.update(kind=model, num_layers=2, hidden=16)
    config.update(fields)
    torch.manual_seed(seed)
    net = build_model(config)
    with torch.no_grad():
        net.head.weight.mul_(HEAD_SCALE)
        for p in net.parameters():  # untrained embeddings are tiny: make atoms matter
            if p.dim() == 2 and p.shape[0] > 1:
                p.add_(0.3 * torch.randn_like(p))
    net.eval()
    metric = "mae" if task_type == "regression" else "rocauc"
    task = {"task_type": task_type, "metric": metric, "num_tasks": len(targets),
            "targets": list(targets)}
    n = len(targets)
    block = graphnorm_block(config, task, {}, torch.full((n,), 1.5), torch.full((n,), 2.0),
                            featurizer, {"max_atoms": 40})
    state = {f"model.{k}": v for k, v in net.state_dict().items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"graphnorm": block, "state_dict": state, "epoch": 0}, path)
    return path


def write_ensemble(directory, members: int = 3, **kw) -> Path:
    """An ensemble directory: model_<k>/best.ckpt with seeds 0..members-1."""
    directory = Path(directory)
    for k in range(members):
        write_checkpoint(directory / f"model_{k}" / "best.ckpt", seed=k, **kw)
    return directory
