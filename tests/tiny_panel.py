"""A tiny pre-training run with its ADMET panel (every endpoint scored, none good enough to
be shown: 4 steps on 22 molecules), for the panel's tests and the server's."""
from pathlib import Path

from tiny_corpus import make_tiny_corpus


def _trained(spec, corpus: Path, cache: Path, out: Path):
    """The `PretrainRun` of ``spec`` on ``corpus`` (no held-out task: every head is trained),
    trained 4 steps into ``out``."""
    import torch

    from graphnorm.pretrain import splits
    from graphnorm.pretrain.fit import train
    from graphnorm.pretrain.setup import PretrainRun

    held = splits.HELD_TASK_MIN
    splits.HELD_TASK_MIN = 100
    try:
        torch.set_num_threads(1)
        run = PretrainRun(spec, corpus, cache=cache, progress=False)
    finally:
        splits.HELD_TASK_MIN = held
    out.mkdir()
    run.write_records(out)
    train(run, out, 600, max_steps=4, eval_every=2, progress=False)
    return run


def make_tiny_panel(tmp_path: Path, descriptors=None):
    """(run folder with best.ckpt and panel.json, the PretrainRun, the panel as its file's dict);
    ``descriptors``: the head's descriptor set ("fast": what readout boosters read)."""
    from graphnorm.panel import build as P
    from graphnorm.pretrain.setup import PretrainSpec

    corpus = make_tiny_corpus(tmp_path)
    spec = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                        exclude_tdc=False, val_percent=30, descriptors=descriptors)
    out = tmp_path / "run"
    run = _trained(spec, corpus, tmp_path / "cache", out)
    panel = P.build_panel(run, out, corpus.parent)
    panel.write(out)
    return out, run, panel.to_dict()


def train_tiny_member(tmp_path: Path, run, seed: int) -> Path:
    """Another run of ``run``'s recipe (`make_tiny_panel`'s) with ``seed``, in
    ``<tmp>/run<seed>``: an ensemble member (graphnorm.panel.networks)."""
    import dataclasses

    out = tmp_path / f"run{seed}"
    _trained(dataclasses.replace(run.spec, seed=seed), tmp_path / "admet_corpus",
             tmp_path / "cache", out)
    return out


def make_quantity_panel(tmp_path: Path, corpus: Path, monkeypatch, descriptors=None):
    """(run folder with its panel built, the PretrainRun) of a ``--targets quantities`` run on
    ``corpus``, every endpoint judged and shown (the panel's thresholds lowered through
    ``monkeypatch`` for the test): what the steps after `panel build` start from."""
    import torch

    from graphnorm.panel import build as P
    from graphnorm.pretrain import splits
    from graphnorm.pretrain.fit import train
    from graphnorm.pretrain.setup import PretrainRun, PretrainSpec

    monkeypatch.setattr(splits, "HELD_TASK_MIN", 100)
    for name, value in (("MIN_SELECT", 1), ("MIN_REPORT", 1), ("MIN_R2", -1e9)):
        monkeypatch.setattr(P, name, value)
    torch.set_num_threads(1)
    spec = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                        exclude_tdc=False, val_percent=40, held_out_tasks=False,
                        targets="quantities", descriptors=descriptors)
    run = PretrainRun(spec, corpus, cache=tmp_path / "cache", progress=False)
    out = tmp_path / "run"
    out.mkdir()
    run.write_records(out)
    train(run, out, 600, max_steps=4, eval_every=2, progress=False)
    P.build_panel(run, out, tmp_path).write(out)
    return out, run


def explained_as_halves(out: Path, endpoint: str):
    """The atom attributions of the blended ``endpoint`` of the panel in ``out``, checked to
    be half the network's and half its booster's, atom by atom; returned to check more."""
    import numpy as np

    from graphnorm.explain.panel_attributions import (booster_attributions, explain_endpoint,
                                                      method_for)
    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load(out, all_endpoints=True)
    smiles = ["CCOC", "c1ccccc1CC"]
    got = explain_endpoint(panel, smiles, endpoint)
    network = explain_endpoint(panel, smiles, endpoint, head=True)
    booster = booster_attributions(panel, panel.endpoint_position(endpoint), smiles)
    assert got.method == method_for(panel, endpoint, None) == "occlusion+treeshap"
    for s, a, b in zip(got.scores, network.scores, booster.scores):
        assert np.allclose(s, 0.5 * (a + b))
    assert np.allclose(got.atoms["score"], np.concatenate(got.scores))
    return got, network
