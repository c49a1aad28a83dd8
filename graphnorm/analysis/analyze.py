"""``graphnorm analyze``: how the [VNode] and the atom tokens use their embedding space.

For one checkpoint (or two, with ``compare``) the final-norm outputs of a dataset split are
collected: the [VNode] embedding of each graph and the embeddings of all real atom tokens.
For each we report uniformity L_U (seed paper Eq. 4), the singular value spectrum
(seed paper Fig. 4b/c), explained variance EV_k (IsoBN Sec. 5.3) and per-dimension
distributions (seed paper Fig. 2), as ``analysis.json`` and PNG plots.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import torch
from torch.utils.data import DataLoader, Subset

from graphnorm.checkpoints import load_checkpoint
from graphnorm.graph import collate_graphs
from .metrics import embedding_report, singular_values
from .plots import plot_dimension_distributions, plot_explained_variance, plot_spectra


@torch.no_grad()
def collect_embeddings(loaded, dataset, batch_size: int = 256,
                       max_token_samples: Optional[int] = None) -> dict[str, torch.Tensor]:
    """[VNode] embeddings [G, D] and real-token embeddings [sum N, D] after the final norm.

    With ``max_token_samples`` the tokens are a fixed random subsample (seed 0), so the
    numbers repeat from run to run and across checkpoints of the same split."""
    vnodes, tokens = [], []
    for batch in DataLoader(dataset, batch_size=batch_size, collate_fn=collate_graphs):
        emb = loaded.model.encode(batch)
        vnodes.append(emb.vnode)
        tokens.append(emb.tokens[emb.node_mask])
    tok = torch.cat(tokens)
    if max_token_samples is not None and len(tok) > max_token_samples:
        gen = torch.Generator().manual_seed(0)
        tok = tok[torch.randperm(len(tok), generator=gen)[:max_token_samples]]
    return {"vnode": torch.cat(vnodes), "tokens": tok}


def _label(path: str | Path, loaded) -> str:
    norm = loaded.meta.get("model_config", {}).get("norm", "?")
    return f"{norm} ({Path(path).parent.name})"


def checkpoint_dataset(loaded, dataset: Optional[str] = None) -> str:
    """The benchmark to analyze: ``dataset`` if given, else the one the checkpoint was
    trained on (its task names it)."""
    from graphnorm.data import DATASET_INFO

    name = dataset or loaded.task.get("name")
    if name not in DATASET_INFO:
        raise ValueError(f"{loaded.path} was trained on {name!r}, not a benchmark; give "
                         "--data FILE (own molecules) or --dataset NAME")
    return name


def analyze(checkpoint: str, dataset: Optional[str], out: Path, compare: Optional[str] = None,
            raw_dir: Optional[str] = None, split: str = "test", limit: Optional[int] = None,
            max_token_samples: int = 20000, data_file: Optional[str] = None,
            smiles_column: Optional[str] = None) -> dict:
    """``dataset``: a benchmark split (None: the one the checkpoint was trained on);
    ``data_file``: a table of own molecules (all its rows; ``split`` unused) instead. Either
    is featurized as each checkpoint was trained (its FeaturizerConfig)."""
    from graphnorm.data import load_dataset

    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for path in [checkpoint] + ([compare] if compare else []):
        loaded = load_checkpoint(path)
        if data_file is not None:
            from graphnorm.inference.embed import input_graphs

            data = input_graphs(data_file, loaded, smiles_column)
        else:
            dataset = checkpoint_dataset(loaded, dataset)
            data = load_dataset(dataset, raw_dir=raw_dir, featurizer=loaded.featurizer)[split]
        if limit:
            data = Subset(data, range(min(limit, len(data))))
        emb = collect_embeddings(loaded, data, max_token_samples=max_token_samples)
        runs[_label(path, loaded)] = {"checkpoint": str(path), **emb}

    report = {"dataset": data_file or dataset, "split": "all rows" if data_file else split,
              "graphs": len(data), "runs": {}}
    for label, r in runs.items():
        report["runs"][label] = {"checkpoint": r["checkpoint"],
                                 "vnode": embedding_report(r["vnode"]),
                                 "tokens": embedding_report(r["tokens"])}
    (out / "analysis.json").write_text(json.dumps(report, indent=2))
    for kind in ("vnode", "tokens"):
        z = {f"{label} [{kind}]": r[kind] for label, r in runs.items()}
        plot_spectra({k: singular_values(v) for k, v in z.items()}, out / f"spectrum_{kind}.png")
        plot_explained_variance(z, out / f"explained_variance_{kind}.png")
    # Fig. 2 style: [VNode] and token distributions of each run side by side
    both = {}
    for label, r in runs.items():
        both[f"{label} [VNode]"] = r["vnode"]
        both[f"{label} tokens"] = r["tokens"]
    plot_dimension_distributions(both, out / "dimension_distributions.png")
    _print_table(report)
    return report


def _print_table(report: dict) -> None:
    print(f"{'run':40s} {'kind':7s} {'L_U':>8s} {'EV_1':>7s} {'eff.rank':>9s}")
    for label, r in report["runs"].items():
        for kind in ("vnode", "tokens"):
            u, ev1, er = (_num(r[kind].get(k)) for k in ("uniformity", "ev_1", "effective_rank"))
            print(f"{label[:40]:40s} {kind:7s} {u:8.3f} {ev1:7.3f} {er:9.2f}")


def _num(v) -> float:
    return float("nan") if v is None else float(v)
