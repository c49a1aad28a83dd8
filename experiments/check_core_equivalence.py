"""Numerical equivalence of the transformer core across refactors (issue 13).

``save`` (run once, on the code before the refactor) seeds and builds tiny models of every
kind that sits on the core -- Graphormer (vnode+sum readout, RWPE, GINE branch, sep:bn+bn;
and sep:bn+ln), the text encoder (post- and pre-norm) and ViT + MAE -- warms up their
batch statistics, and stores their float32 state dicts (the layout of that code), fixed
inputs and float64 outputs in ``tests/fixtures/core_v1.pt``. ``check`` rebuilds the models
from the same arguments, loads the stored state dicts (old key names renamed by
``graphnorm.checkpoints.upgrade_keys``), and compares in float64:
eval outputs, train-mode outputs with the same seed (dropout masks, batch statistics),
gradients and the parameters a seeded constructor draws (same random-number order), and
the order of the parameters (``order``: optimizer states of old checkpoints line up; it
differs only for the text encoder, whose old blocks listed their norms last).

    python experiments/check_core_equivalence.py save    # before the refactor
    python experiments/check_core_equivalence.py check   # after: prints the max abs diff

``tests/nn/test_core_equivalence.py`` runs ``check`` with atol 1e-10.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import torch

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "core_v1.pt"
SEED = 0

GRAPH_BASE = dict(num_layers=2, hidden=8, ffn_hidden=8, heads=2, dropout=0.1,
                  attention_dropout=0.1, input_dropout=0.1, max_hops=3)
CASES = {
    "graph_gps": ("graph", dict(GRAPH_BASE, norm="sep:bn+bn", readout="vnode+sum",
                                rwpe_steps=3, local_mp="gine")),
    "graph_sep": ("graph", dict(GRAPH_BASE, norm="sep:bn+ln")),
    "text_post": ("text", dict(dim=8, depth=2, heads=2, max_len=16, type_vocab_size=2,
                               norm="sep:bn+ln", pre_norm=False, dropout=0.0, isobn_head=True)),
    "text_pre": ("text", dict(dim=8, depth=2, heads=2, max_len=16, norm="sep:bn+bn",
                              pre_norm=True, dropout=0.0)),
    "vit": ("vit", dict(dim=8, depth=2, heads=2, norm="sep:bn+ln", pre_patch_norm=True,
                        post_patch_norm=True)),
    "mae": ("mae", dict(dim=8, depth=1, heads=2, norm="sep:bn+ln", pos_embed="sincos",
                        decoder_dim=8, decoder_depth=1, decoder_heads=2, unif_weight=0.1)),
}
SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CC1N", "O"]
VOCAB = 12


def build(kind: str, kw: dict) -> torch.nn.Module:
    """The model of one case; every constructor call is public API that the refactor keeps."""
    kw = dict(kw)
    if kind == "graph":
        from graphnorm.graph import Graphormer, GraphormerConfig

        return Graphormer(GraphormerConfig(**kw))
    if kind == "text":
        from graphnorm.text import TextClassifier, TextEncoder

        head = dict(isobn_head=kw.pop("isobn_head", False), dropout=kw["dropout"])
        return TextClassifier(TextEncoder(VOCAB, **kw), num_classes=3, **head)
    from graphnorm.vision import MaskedAutoencoder, VisionTransformer

    dec = {k: kw.pop(k) for k in list(kw) if k.startswith("decoder") or k == "unif_weight"}
    vit = VisionTransformer(image_size=8, patch_size=2, in_chans=1, **kw)
    return MaskedAutoencoder(vit, **dec) if kind == "mae" else vit


def make_inputs() -> dict:
    """Fixed inputs: a collated graph batch (as tensors), token ids with padding, images."""
    import dataclasses

    from graphnorm.graph import collate_graphs, smiles_to_data

    batch = collate_graphs([smiles_to_data(s, vocab="zinc", max_hops=3) for s in SMILES])
    # long fields stored as int16 (restored by _graph_batch): the fixture stays small
    graph = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)
             if isinstance(getattr(batch, f.name), torch.Tensor)}
    graph = {k: v.short() if v.dtype == torch.long else v for k, v in graph.items()}
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(2, VOCAB, (4, 7), generator=g)
    ids[:, 0] = 1
    pad = torch.arange(7)[None] >= torch.tensor([7, 5, 3, 2])[:, None]
    ids[pad] = 0
    images = torch.randn(4, 1, 8, 8, generator=g)
    noise = torch.rand(4, 16, generator=g)
    return {"graph": graph, "ids": ids, "pad": pad, "images": images, "noise": noise}


def _graph_batch(fields: dict, dtype: torch.dtype = torch.float64):
    from graphnorm.graph import GraphBatch

    return GraphBatch(**{k: v.long() if v.dtype == torch.int16 else
                         v.to(dtype) if v.is_floating_point() else v for k, v in fields.items()})


def run(kind: str, model: torch.nn.Module, inputs: dict) -> list[torch.Tensor]:
    """Outputs of one float64 forward in the model's current mode, padding rows zeroed."""
    if kind == "graph":
        batch = _graph_batch(inputs["graph"])
        pred, emb = model(batch, return_embeddings=True)
        return [pred, emb.vnode, emb.tokens * emb.node_mask[..., None]]
    if kind == "text":
        ids, pad = inputs["ids"], inputs["pad"]
        hidden = model.encoder(ids, pad, torch.zeros_like(ids))
        return [model(ids, pad, torch.zeros_like(ids)), hidden.masked_fill(pad[..., None], 0.0)]
    images = inputs["images"].double()
    if kind == "vit":
        return [model(images)]
    out = model(images, noise=inputs["noise"])
    return [out["loss"], out["pred"], out["cls"]]


def outputs(kind: str, model: torch.nn.Module, inputs: dict) -> dict:
    """Eval outputs, train-mode outputs under a fixed seed, and gradients in parameter order."""
    model = copy.deepcopy(model).double()
    with torch.no_grad():
        evals = run(kind, model.eval(), inputs)
    torch.manual_seed(123)
    train = run(kind, model.train(), inputs)
    loss = sum((t * (i + 1)).sum() for i, t in enumerate(train))
    grads = torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad],
                                allow_unused=True)
    return {"eval": evals, "train": [t.detach() for t in train],
            "grads": [torch.zeros(0) if g is None else g for g in grads]}


def warm_up(kind: str, model: torch.nn.Module, inputs: dict) -> None:
    """A few float32 train-mode passes so running statistics differ from their defaults."""
    model.train()
    with torch.no_grad():
        for step in range(3):
            torch.manual_seed(step)
            if kind == "graph":
                model(_graph_batch(inputs["graph"], torch.float32))
            elif kind == "text":
                model(inputs["ids"], inputs["pad"])
            elif kind == "vit":
                model(inputs["images"])
            else:
                model(inputs["images"], noise=inputs["noise"])


def pack(state: dict) -> dict:
    """A state dict as one float32 vector plus keys, shapes and dtypes: a few hundred small
    tensors saved one by one cost ~0.4 kB each in a torch zip file."""
    return {"keys": " ".join(state), "shapes": [list(t.shape) for t in state.values()],
            "dtypes": " ".join(str(t.dtype).removeprefix("torch.") for t in state.values()),
            "values": torch.cat([t.detach().reshape(-1).float() for t in state.values()])}


def unpack(packed: dict) -> dict:
    out, start = {}, 0
    for key, shape, dtype in zip(packed["keys"].split(), packed["shapes"], packed["dtypes"].split()):
        n = 1
        for s in shape:
            n *= s
        out[key] = packed["values"][start:start + n].reshape(shape).to(getattr(torch, dtype))
        start += n
    return out


def signature(tensors: list[torch.Tensor], ordered: bool = True) -> torch.Tensor:
    """[n, 2] float64: per tensor its sum and its dot product with a random tensor that
    depends only on the shape -- equal signatures mean equal tensors up to rounding, at 16
    bytes per tensor. ``ordered=False`` sorts the rows: the same tensors in any order."""
    rows = [torch.stack([t.double().sum(), (t.double() * torch.randn(
        t.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64)).sum()])
        for t in tensors]
    sig = torch.stack(rows) if rows else torch.zeros(0, 2, dtype=torch.float64)
    return sig if ordered else sig[sig[:, 1].argsort()]


def compact(init: list, out: dict) -> dict:
    """What the fixture keeps of one case: eval outputs in full, the rest as signatures.
    Parameters (init, grads) are compared as sets, their order separately (``order``)."""
    return {"init": signature(init, False), "eval": torch.cat([t.reshape(-1) for t in out["eval"]]),
            "train": signature(out["train"]), "grads": signature(out["grads"], False),
            "order": torch.tensor([sum(t.shape) * 1000 + t.dim() for t in init])}


def save(path: Path = FIXTURE) -> None:
    inputs = make_inputs()
    cases = {}
    for name, (kind, kw) in CASES.items():
        torch.manual_seed(SEED)
        model = build(kind, kw)
        init = [p.detach().clone() for p in model.parameters()]
        warm_up(kind, model, inputs)
        cases[name] = {"state": pack(model.state_dict()), **compact(init, outputs(kind, model, inputs))}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"inputs": inputs, "cases": cases}, path)
    print(f"wrote {path} ({path.stat().st_size / 1024:.1f} kB)")


def check(path: Path = FIXTURE) -> dict[str, dict[str, float]]:
    """Max abs difference per case and quantity between the fixture and the current code."""
    from graphnorm.checkpoints import upgrade_keys

    data = torch.load(path, weights_only=True)
    report = {}
    for name, (kind, kw) in CASES.items():
        ref = data["cases"][name]
        torch.manual_seed(SEED)
        model = build(kind, kw)
        init = [p.detach().clone() for p in model.parameters()]
        model.load_state_dict(upgrade_keys(model, unpack(ref["state"])))  # old key names
        now = compact(init, outputs(kind, model, data["inputs"]))
        report[name] = {k: (now[k] - ref[k]).abs().max().item() if now[k].shape == ref[k].shape
                        else float("inf") for k in ("init", "eval", "train", "grads", "order")}
    return report


if __name__ == "__main__":
    if sys.argv[1:] == ["save"]:
        save()
    elif sys.argv[1:] == ["check"]:
        rep = check()
        for name, diffs in rep.items():
            print(f"{name:10s} " + "  ".join(f"{k} {v:.2e}" for k, v in diffs.items()))
        worst = max(v for d in rep.values() for k, v in d.items() if k != "order")
        print(f"max abs diff (init, eval, train, grads): {worst:.2e}")
    else:
        sys.exit("usage: check_core_equivalence.py save|check")
