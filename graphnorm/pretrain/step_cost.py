"""``graphnorm pretrain --step-cost NORM[,NORM...]``: the CPU cost of one pre-training step per
norm (or size), measured side by side in one process.

The CPU time a run logs (``log.jsonl``) depends on what else the machine ran: the same
``sep:bn+bn`` run logged 0.8-1.0 CPU-s per step in one session and another norm 0.33 in the
next, on the same code, because hyperthreads and caches are shared with the other processes.
Runs of different sessions are therefore put at equal cost by their steps times each
model's cost per step, measured here: the models take turns on the same batches of corpus
molecules (forward, the masked multi-task loss's stand-in -- the squared outputs, whose cost
is the head's -- backward and AdamW), so a change of load hits all of them alike.
"""
from __future__ import annotations

import time

import numpy as np

ROUNDS, STEPS_PER_TURN, BATCHES = 6, 3, 4


def step_costs(specs: dict, smiles: list[str], threads: int = 1) -> dict[str, float]:
    """{label: CPU-seconds per optimizer step} of the models of ``specs`` ({label:
    PretrainSpec}) on batches of ``smiles`` (the spec's batch size each), one thread."""
    import torch

    from graphnorm.chem import featurize_many, graph_data
    from graphnorm.data.table_dataset import table_featurizer
    from graphnorm.graph.collate import collate_graphs
    from graphnorm.models import build_model

    from .setup import model_config

    torch.set_num_threads(threads)
    featurizer = table_featurizer()
    first = next(iter(specs.values()))
    result = featurize_many(smiles[:first.batch_size * BATCHES], featurizer)
    graphs = [graph_data(a, s) for a, s in zip(result.graphs, smiles) if a is not None]
    size = first.batch_size
    batches = [collate_graphs(graphs[k:k + size]) for k in range(0, len(graphs) - size + 1, size)]
    models, optims = {}, {}
    for label, spec in specs.items():
        torch.manual_seed(spec.seed)
        models[label] = build_model(model_config(spec, 802, featurizer)).train()
        optims[label] = torch.optim.AdamW(models[label].parameters(), lr=spec.lr)
    spent = {label: 0.0 for label in specs}
    for r in range(ROUNDS):
        for label, model in models.items():
            started = time.process_time()
            for k in range(STEPS_PER_TURN):
                batch = batches[(r * STEPS_PER_TURN + k) % len(batches)]
                optims[label].zero_grad()
                model(batch).square().mean().backward()
                optims[label].step()
            spent[label] += time.process_time() - started
    return {label: spent[label] / (ROUNDS * STEPS_PER_TURN) for label in specs}


def norm_specs(base, norms: list[str]) -> dict:
    """One spec per norm, the rest as ``base``."""
    return {n: type(base).from_dict({**base.to_dict(), "norm": n}) for n in norms}


def sample_smiles(corpus, n: int, seed: int = 0) -> list[str]:
    """``n`` corpus molecules drawn at random (drug-sized batches, as training sees them)."""
    rng = np.random.default_rng(seed)
    return [corpus.smiles[i] for i in rng.choice(len(corpus), min(n, len(corpus)), replace=False)]
