"""What the BatchNorm recalibration before each validation costs, by how its molecules are batched.

``RecalibrateBatchStats`` re-estimates BN statistics from 8 random training batches of the
recipe's batch size (64: 512 molecules) before every validation; on hia_hou that was ~11 % of
the Graphormer member's fit (cProfile, session 34). For each RUN (a board run's member folder:
its metrics.json config is rebuilt, fresh weights, one thread), the member first trains
``--steps`` steps; then, alternating ``--rounds`` times, the same 512 molecules recalibrate in
``8x64``, ``4x128``, ``2x256`` and ``1x512`` batches. Printed per layout: CPU ms (collate +
forwards, min and median), the share of one training step's median, and the validation loss
and the largest relative change of any running statistic against ``8x64``.

    python experiments/recal_cost.py RUN [RUN ...] --out experiments/results/tdc_admet/cost/recal_layouts.md
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_cost_ab import member_module  # noqa: E402

LAYOUTS = ((8, 64), (4, 128), (2, 256), (1, 512))


def recal(module, dm, count: int, size: int, seed: int) -> float:
    from graphnorm.norms import recalibrate_batch_stats

    start = time.process_time()
    dm.batch_size, saved = size, dm.batch_size
    try:
        recalibrate_batch_stats(module.model, dm.random_batches(count, seed=seed))
    finally:
        dm.batch_size = saved
    return (time.process_time() - start) * 1e3


def stats(module) -> list[torch.Tensor]:
    return [b.detach().clone() for n, b in module.model.named_buffers() if "running" in n or "moving" in n]


@torch.no_grad()
def val_loss(module, dm) -> float:
    module.eval()
    losses = [float((module.model(b).view(-1) - b.y.view(-1)).square().mean()) for b in dm.val_dataloader()]
    module.train()
    return statistics.fmean(losses)


def measure(run: Path, steps: int, rounds: int) -> list[str]:
    module, dm = member_module(run)
    opt = torch.optim.AdamW(module.parameters(), lr=1e-3)
    module.train()
    step_ms, done = [], 0
    while done < steps:
        for b in dm.train_dataloader():
            start = time.process_time()
            opt.zero_grad()
            module.training_step(b, done).backward()
            opt.step()
            step_ms.append((time.process_time() - start) * 1e3)
            done += 1
            if done == steps:
                break
    step = statistics.median(step_ms[5:])
    times = {layout: [] for layout in LAYOUTS}
    for r in range(rounds):
        for layout in LAYOUTS:
            times[layout].append(recal(module, dm, *layout, seed=r))
    rows, ref = [], None
    for layout in LAYOUTS:
        recal(module, dm, *layout, seed=0)
        now, loss = stats(module), val_loss(module, dm)
        ref = ref or now
        change = max(float(((a - b).abs() / b.abs().clamp_min(1e-3)).max()) for a, b in zip(now, ref))
        ms = times[layout]
        rows.append(f"| {run.parts[-5] if run.name.startswith('model') else run.parts[-4]} | {len(dm.splits['train'])} "
                    f"| {layout[0]}x{layout[1]} | {min(ms):.0f} | {statistics.median(ms):.0f} "
                    f"| {statistics.median(ms) / step:.2f} | {loss:.4g} | {change:.3f} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--steps", type=int, default=75)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    from graphnorm.provenance import code_sha, cpu_model
    import os
    lines = [f"command: `python experiments/recal_cost.py {' '.join(map(str, args.runs))} --steps {args.steps} "
             f"--rounds {args.rounds}` ({code_sha()}, {cpu_model()}, one thread, load {os.getloadavg()[0]:.2f})", "",
             "| task | training molecules | layout | recal CPU ms, min | median | in training steps | val loss | max rel. change of a BN statistic vs 8x64 |",
             "|---|---|---|---|---|---|---|---|"]
    for run in args.runs:
        lines += measure(run, args.steps, args.rounds)
    lines.append(f"\nload after: {os.getloadavg()[0]:.2f}")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
