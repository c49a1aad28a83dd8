"""CPU per optimizer step of one Graphormer member, the code before a change against this checkout.

For each TASK, the Graphormer member of a board run (``<bench>/<task>/runs/sep-bn-bn/seed0``,
its ``model_0`` for an ensemble) is rebuilt from its metrics.json config; one training epoch's
batches are collated once, then forward + backward + AdamW step run over them ``--epochs``
times, each epoch timed in CPU-s (``time.process_time``; collation, validation and Lightning
excluded). The old code runs from a git worktree (``--old``, made with ``git worktree add
/tmp/old_wt <sha>``), this checkout after it, ``--rounds`` times alternately, one process at a
time (one thread). Printed: the minimum over epochs of each process, per round -- the least
disturbed figure on a shared host, where whole runs of the same config varied by 20 %.

    python experiments/step_cost_ab.py --old /tmp/old_wt --tasks hia_hou,half_life_obach --out experiments/results/tdc_admet/cost/packed_tokens.md
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def member(bench: str, task: str) -> Path:
    run = ROOT / "experiments/results/tdc_admet" / bench / task / "runs/sep-bn-bn/seed0"
    return run / "model_0" if (run / "model_0").is_dir() else run


def member_module(run: Path):
    """RUN's Graphormer rebuilt from its metrics.json config, fresh weights (seed 0), and its
    data module set up, in this process (one thread, memory held as ``train()`` holds it)."""
    import tempfile

    import torch
    import yaml

    sys.path.insert(0, str(ROOT / "experiments"))
    from member_cost_profile import write_rerun_config
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.datamodule import GraphDataModule
    from graphnorm.train.memory import hold_freed_memory
    from graphnorm.train.model_config import model_config_for
    from graphnorm.train.module import GraphormerModule

    with tempfile.TemporaryDirectory() as tmp:
        values = yaml.safe_load(write_rerun_config(run, Path(tmp) / "out", Path(tmp) / "c.yaml").read_text())
    cfg = TrainConfig(**{k: v for k, v in values.items() if k in TrainConfig.__dataclass_fields__})
    torch.set_num_threads(1)
    torch.manual_seed(0)
    hold_freed_memory()  # as train() does
    dm = GraphDataModule.from_config(cfg)
    dm.setup()
    cfg = cfg.with_step_budget(dm.steps_per_epoch())
    module = GraphormerModule(model_config_for(cfg, dm.info, dm.featurizer), dict(dm.info, name=dm.name),
                              cfg.to_dict(), *dm.target_stats(None), dm.steps_per_epoch(),
                              dm.train_domain(), dm.featurizer.to_dict())
    encoder = getattr(module.model, "descriptors", None)
    if encoder is not None:
        encoder.fit_scaling(dm.train_descriptors())
    module.log = lambda *a, **k: None  # no Trainer here
    return module, dm


def step_cost(run: Path, epochs: int) -> list[float]:
    """This process's code: the share of real tokens in the epoch's padded batches, then CPU
    ms per step of each timed epoch (after one warm-up pass)."""
    import time

    import torch

    module, dm = member_module(run)
    opt = torch.optim.AdamW(module.parameters(), lr=1e-3)
    batches = list(dm.train_dataloader())
    module.train()

    def epoch() -> float:
        start = time.process_time()
        for b in batches:
            opt.zero_grad()
            module.training_step(b, 0).backward()
            opt.step()
        return (time.process_time() - start) / len(batches) * 1000

    epoch()  # warm-up
    real = sum(int(b.node_mask.sum()) + b.num_graphs for b in batches)
    padded = sum(b.num_graphs * (b.max_nodes + 1) for b in batches)
    return [real / padded] + [epoch() for _ in range(epochs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="a git worktree of the code before")
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--bench", default="board31")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: time RUN in this process
    args = ap.parse_args()
    if args.one:
        print(" ".join(f"{v:.3f}" for v in step_cost(Path(args.one), args.epochs)))
        return
    env = dict(os.environ, GRAPHNORM_CACHE=os.environ.get("GRAPHNORM_CACHE", str(ROOT / "data/cache")))
    lines = [f"command: `python experiments/step_cost_ab.py --old {args.old} --tasks {args.tasks} "
             f"--bench {args.bench} --epochs {args.epochs} --rounds {args.rounds}`", "",
             "| task | real tokens in the padded batches | round | load (1 min) | old: min ms/step | "
             "new: min ms/step | change |",
             "|---|---|---|---|---|---|---|"]
    for task in args.tasks.split(","):
        run = member(args.bench, task)
        for r in range(args.rounds):
            load = os.getloadavg()[0]
            mins = []
            for tree in (args.old, ROOT):
                cmd = [sys.executable, str(ROOT / "experiments/step_cost_ab.py"), "--one", str(run),
                       "--tasks", task, "--epochs", str(args.epochs)]
                out = subprocess.run(cmd, cwd=tree, env=dict(env, PYTHONPATH=str(tree)), check=True,
                                     capture_output=True, text=True).stdout.split()
                real = float(out[0])
                mins.append(min(map(float, out[1:])))
            lines.append(f"| {task} | {real:.2f} | {r} | {load:.2f} | {mins[0]:.1f} | {mins[1]:.1f} | "
                         f"{100 * (mins[1] / mins[0] - 1):+.0f} % |")
            print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
