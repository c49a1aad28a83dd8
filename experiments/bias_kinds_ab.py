"""The attention bias built once per kind of atom pair against once per pair, in one process.

For each TASK, the Graphormer member of a board run is rebuilt from its metrics.json config
(as ``step_cost_ab.py`` does) and one training epoch's batches are collated once. Then, in
alternation (``--rounds`` times, one thread): the bias's forward + backward alone, and a whole
optimizer step, each with ``AttentionBias.distinct_pairs`` as shipped and with every pair its
own kind (the code before: x has one row per pair; the identity gather it adds costs ~1 %).
Both give the same bias (checked, bit for bit). Printed: CPU ms per batch, min and median.
One process alternating both forms sees the same allocator and cache state, which separate
processes on a shared host did not (step_cost_ab.py: up to 30 % between rounds).

    python experiments/bias_kinds_ab.py --tasks hia_hou,half_life_obach --out experiments/results/tdc_admet/cost/distinct_pairs_inprocess.md
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_cost_ab import member, member_module  # noqa: E402


def every_pair_its_own_kind(edge_attr, path, spd):
    order = torch.arange(len(spd))
    return order, order


def measure(run: Path, rounds: int) -> dict:
    module, dm = member_module(run)
    batches = list(dm.train_dataloader())
    bias = module.model.attn_bias
    shipped = bias.distinct_pairs
    grads = [torch.randn(b.num_graphs, bias.heads, b.max_nodes + 1, b.max_nodes + 1) for b in batches]
    opt = torch.optim.AdamW(module.parameters(), lr=1e-3)

    def bias_only():
        for b, g in zip(batches, grads):
            out = bias(b)
            torch.autograd.backward(out, g.masked_fill(torch.isinf(out), 0))

    def step():
        for b in batches:
            opt.zero_grad()
            module.training_step(b, 0).backward()
            opt.step()

    kinds = []
    for b in batches:
        on = (b.node_mask[:, :, None] & b.node_mask[:, None, :]).view(-1)
        kinds.append(len(shipped(b.edge_attr, b.path.view(-1, b.path.shape[-1])[on], b.spd.view(-1)[on])[0]))
        with torch.no_grad():
            same = bias(b)
            bias.distinct_pairs = every_pair_its_own_kind
            assert torch.equal(same, bias(b)), "the two forms disagree"
            bias.distinct_pairs = shipped
    times = {}
    for part, fn in (("bias", bias_only), ("step", step)):
        for form in (shipped, every_pair_its_own_kind, shipped, every_pair_its_own_kind):  # warm-up
            bias.distinct_pairs = form
            fn()
        for _ in range(rounds):
            for name, form in (("kinds", shipped), ("pairs", every_pair_its_own_kind)):
                bias.distinct_pairs = form
                start = time.process_time()
                fn()
                times.setdefault((part, name), []).append((time.process_time() - start) / len(batches) * 1000)
        bias.distinct_pairs = shipped
    pairs = sum(int((b.node_mask.sum(1) ** 2).sum()) for b in batches) / len(batches)
    return dict(pairs=pairs, kinds=sum(kinds) / len(kinds), times=times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--bench", default="board33")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    lines = [f"command: `python experiments/bias_kinds_ab.py --tasks {args.tasks} --bench {args.bench} "
             f"--rounds {args.rounds}`", "",
             "| task | load (1 min) | atom pairs per batch | kinds per batch | bias fwd+bwd ms: per pair / per kind "
             "(min; median) | change (median) | step ms: per pair / per kind (min; median) | change (median) |",
             "|---|---|---|---|---|---|---|---|"]
    for task in args.tasks.split(","):
        load = os.getloadavg()[0]
        r = measure(member(args.bench, task), args.rounds)
        cells = []
        for part in ("bias", "step"):
            old, new = r["times"][(part, "pairs")], r["times"][(part, "kinds")]
            mo, mn = statistics.median(old), statistics.median(new)
            cells.append(f"{min(old):.1f} / {min(new):.1f}; {mo:.1f} / {mn:.1f} | {100 * (mn / mo - 1):+.0f} %")
        lines.append(f"| {task} | {load:.2f} | {r['pairs']:.0f} | {r['kinds']:.0f} | {' | '.join(cells)} |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
