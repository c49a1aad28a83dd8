"""``graphnorm pretrain step-cost NORM[@LxH],...``: the CPU cost of one pre-training step
per norm or size, measured side by side in one process.

The CPU time a run logs (``log.jsonl``) depends on what else the machine ran: the same
``sep:bn+bn`` run logged 0.8-1.0 CPU-s per step in one session and another norm 0.33 in the
next, on the same code, because hyperthreads and caches are shared with the other processes.
Runs of different sessions are therefore put at equal cost by their steps times each
model's cost per step, measured here: the models take turns on the same batches of corpus
molecules (forward, the masked multi-task loss's stand-in -- the squared outputs, whose cost
is the head's -- backward and AdamW), so a change of load hits all of them alike.
"""
from __future__ import annotations

import dataclasses
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
    kinds = {spec.descriptors for spec in specs.values()} - {False}
    if len(kinds) > 1:
        raise ValueError(f"step-cost: one descriptor set at a time, got {sorted(map(str, kinds))}")
    if kinds:  # the batches carry them; a model without descriptors leaves them unread
        featurizer = dataclasses.replace(featurizer, descriptors=kinds.pop())
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


def model_specs(base, labels: list[str]) -> dict:
    """One spec per label, the rest as ``base``. A label is a norm (``sep:bn+bn``: ``base``'s
    size) or a norm at a size, ``NORM@LxH`` or ``NORM@LxHxF`` (layers, width, FFN width;
    F defaults to 2 H) -- so sizes, not only norms, can be put on one clock -- optionally
    with ``/fast``, ``/rdkit2d`` or ``/none``: the head's descriptors (default: ``base``'s)."""
    from graphnorm.chem.descriptors import DESCRIPTOR_SETS, descriptor_set

    specs = {}
    for label in labels:
        rest, _, described = label.partition("/")
        norm, _, size = rest.partition("@")
        values = {**base.to_dict(), "norm": norm}
        if described:
            if described != "none" and described not in DESCRIPTOR_SETS:
                raise ValueError(f"step-cost {label!r}: descriptors are /none, "
                                 f"{', '.join('/' + k for k in sorted(DESCRIPTOR_SETS))}")
            values["descriptors"] = described != "none" and descriptor_set(described)
        if size:
            try:
                dims = [int(v) for v in size.lower().split("x")]
            except ValueError:
                dims = []
            if len(dims) not in (2, 3) or min(dims) < 1:
                raise ValueError(f"step-cost {label!r}: a size is LAYERSxWIDTH or "
                                 "LAYERSxWIDTHxFFN, e.g. sep:bn+bn@6x96")
            values.update(num_layers=dims[0], hidden=dims[1],
                          ffn_hidden=dims[2] if len(dims) == 3 else 2 * dims[1])
        specs[label] = type(base).from_dict(values)
    return specs


def cost_of(settings: dict, record: dict) -> float | None:
    """CPU-s per step of a run (its ``pretrain.json`` settings) in a ``step_cost.json``
    record: under ``NORM@LxHxF``, ``NORM@LxH`` (FFN 2 H), or plain ``NORM`` when the run
    has the record's base size; None when the record did not measure it."""
    per_step = record["cpu_s_per_step"]
    norm, size = settings["norm"], (settings["num_layers"], settings["hidden"],
                                     settings["ffn_hidden"])
    keys = [f"{norm}@{size[0]}x{size[1]}x{size[2]}"]
    if size[2] == 2 * size[1]:
        keys.append(f"{norm}@{size[0]}x{size[1]}")
    if list(size) == list(record.get("size", ())):
        keys.append(norm)
    return next((per_step[k] for k in keys if k in per_step), None)


def sample_smiles(corpus, n: int, seed: int = 0) -> list[str]:
    """``n`` corpus molecules drawn at random (drug-sized batches, as training sees them)."""
    rng = np.random.default_rng(seed)
    return [corpus.smiles[i] for i in rng.choice(len(corpus), min(n, len(corpus)), replace=False)]
