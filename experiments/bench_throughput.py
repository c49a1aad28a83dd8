"""Training and inference throughput of Graphormer-slim on ZINC-subset molecules (CPU).

Per configuration: graphs/s of a training step (forward + L1 loss + backward + AdamW step)
and of eval-mode inference, batch 256, on pre-collated batches of real ZINC-subset training
molecules (featurized with the "zinc" vocabulary). Collation is timed separately: in training
it runs in DataLoader workers. Rows vary attention dropout (0.1 as in the paper vs 0) and
length bucketing (``LengthBucketSampler``: graphs of similar size share a batch).

The build machine is shared. Wall-clock graphs/s depends on what else runs, so CPU time is
reported too ("cpu g/s" = graphs per CPU-second of this process, x threads for the 2-core
equivalent when the threads are busy). With other processes on the cores, OpenMP's spinning
wait policy collapses multi-thread throughput (threads spin for cores that are taken), so
the default here is OMP_WAIT_POLICY=PASSIVE; ``--omp-wait active`` restores libgomp's spin.

Two more rows bound what this machine can give:
- "ddp 2x1": two processes of one thread each (``DistributedDataParallel``, gloo), each
  training on half of every batch of 256 (the same global batch and gradient), as
  ``graphnorm train --devices 2 --strategy ddp --threads 1`` does.
- "ceiling": the attention core (softmax(QK^T/sqrt(d) + A) V, forward and backward) replaced
  by a free pass-through of V. Everything else stays (projections, FFN, norms, dropout,
  the bias encodings, AdamW): no attention kernel, however fused, can beat this row.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/bench_throughput.py
    python experiments/bench_throughput.py --threads 1 --profile
"""
from __future__ import annotations

import argparse
import os
import sys

if __name__ == "__main__":  # must precede the first OpenMP use, i.e. importing torch
    if not {"active", "--omp-wait=active"} & set(sys.argv[1:]):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import gzip
import json
import time
from pathlib import Path

import torch

import graphnorm.nn.attention as attention_mod  # biased_attention: swapped for "ceiling"
from graphnorm.graph import LengthBucketSampler, collate_graphs, graphormer_slim

REPO = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", REPO.parent / "shared" / "datasets"))


def zinc_train_graphs(n: int) -> tuple[list, str]:
    """The first n ZINC-subset training molecules, featurized; synthetic graphs as fallback."""
    try:
        from graphnorm.chem import FeaturizerConfig, featurize_many, graph_data

        lines = gzip.open(RAW / "zinc" / "jtvae_train.txt.gz", "rt").read().splitlines()
        index = [int(i) for i in (RAW / "zinc" / "train.index").read_text().strip().split(",")]
        smiles = [lines[i].strip() for i in index[:n]]
        graphs = featurize_many(smiles, FeaturizerConfig(vocab="zinc")).graphs
        return [graph_data(g, s) for s, g in zip(smiles, graphs)], "ZINC-subset train (featurized)"
    except (ImportError, OSError) as e:
        print(f"[bench] falling back to synthetic graphs: {e}", file=sys.stderr)
        return synthetic_graphs(n), "synthetic (~23-node chains with rings)"


def synthetic_graphs(n: int, seed: int = 0) -> list:
    """Chains with one ring closure, 11-37 nodes (ZINC-subset: mean 23.2, max 37)."""
    from torch_geometric.data import Data

    from graphnorm.chem import FeaturizerConfig
    from graphnorm.chem.paths import shortest_paths

    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        k = int(torch.randint(11, 38, (1,), generator=gen))
        src = list(range(k - 1)) + [0]
        dst = list(range(1, k)) + [min(5, k - 1)]
        ei = torch.tensor([src + dst, dst + src])
        spd, path = shortest_paths(ei.numpy(), k, FeaturizerConfig.max_hops, FeaturizerConfig.max_dist)
        out.append(Data(
            x=torch.randint(0, 28, (k, 1), generator=gen), edge_index=ei,
            edge_attr=torch.randint(0, 3, (ei.shape[1], 1), generator=gen),
            spd=torch.from_numpy(spd), path=torch.from_numpy(path), num_nodes=k,
        ))
    return out


def make_batches(graphs: list, batch_size: int, bucket: bool, seed: int = 0) -> list:
    if bucket:
        sampler = LengthBucketSampler([g.num_nodes for g in graphs], batch_size, seed=seed)
        index = list(iter(sampler))
    else:
        perm = torch.randperm(len(graphs), generator=torch.Generator().manual_seed(seed))
        index = [perm[i : i + batch_size].tolist() for i in range(0, len(graphs), batch_size)]
    index = [ix for ix in index if len(ix) == batch_size]  # full batches only
    return [[graphs[i] for i in ix] for ix in index]


def timed(fn, items, warmup: int) -> tuple[float, float, int]:
    """(wall s, process CPU s, graphs) over items[warmup:], after running the warm-up items."""
    for it in items[:warmup]:
        fn(it)
    wall = cpu = 0.0
    graphs = 0
    for it in items[warmup:]:
        t0, c0 = time.perf_counter(), time.process_time()
        fn(it)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        graphs += it.num_graphs
    return wall, cpu, graphs


def train_step(model, opt):
    def step(b):
        loss = (model(b).squeeze(-1) - b.y.squeeze(-1)).abs().mean()  # L1 as in the paper
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def free_attention(qkv, bias, heads, p=0.0, impl="auto"):
    """The "ceiling" stand-in for the attention core: V itself (plus a zero use of the bias
    so that the bias encodings still get their backward pass)."""
    D = qkv.shape[-1] // 3
    return qkv[..., 2 * D :] + bias.sum() * 0.0


def run_config(graphs, args, attention_dropout: float, bucket: bool, mode: str) -> dict:
    torch.manual_seed(0)
    lists = make_batches(graphs, args.batch_size, bucket)
    t0 = time.process_time()
    batches = [collate_graphs(g) for g in lists]
    collate_ms = (time.process_time() - t0) / len(batches) * 1e3
    real = sum(int(b.node_mask.sum()) for b in batches)
    padded = sum(b.node_mask.numel() for b in batches)
    model = graphormer_slim(num_tasks=1, vocab="zinc", attention_dropout=attention_dropout)
    for b in batches:
        b.y = torch.randn(b.num_graphs, 1)
    if mode in ("train", "ceiling"):
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01, fused=True)
        saved = attention_mod.biased_attention
        if mode == "ceiling":
            attention_mod.biased_attention = free_attention
        try:
            wall, cpu, n = timed(train_step(model, opt), batches, args.warmup)
        finally:
            attention_mod.biased_attention = saved
    else:
        model.eval()

        def infer(b):
            with torch.inference_mode():
                model(b)

        wall, cpu, n = timed(infer, batches, args.warmup)
    return {
        "mode": mode, "attn_dropout": attention_dropout, "bucketing": bucket,
        "graphs_per_s": n / wall, "graphs_per_cpu_s": n / cpu,
        "ms_per_batch": wall / (len(batches) - args.warmup) * 1e3,
        "real_node_fraction": real / padded, "collate_ms_per_batch": collate_ms,
    }


def _ddp_worker(rank: int, world: int, batches: list, warmup: int, port: int, out: str) -> None:
    """One rank of the "ddp" row: one thread, the rank's half of every batch."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    torch.manual_seed(0)
    model = DistributedDataParallel(graphormer_slim(num_tasks=1, vocab="zinc").train())
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, weight_decay=0.01, fused=True)
    mine = [b[rank] for b in batches]
    step = train_step(model, opt)
    for b in mine[:warmup]:
        step(b)
    dist.barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    for b in mine[warmup:]:
        step(b)
    dist.barrier()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    Path(out, f"rank{rank}.json").write_text(json.dumps({"wall": wall, "cpu": cpu}))
    dist.destroy_process_group()


def run_ddp(graphs, args, world: int = 2) -> dict:
    """Global batch ``args.batch_size`` split over ``world`` one-thread processes."""
    import socket
    import tempfile

    import torch.multiprocessing as mp

    lists = make_batches(graphs, args.batch_size, True)
    batches = []
    for g in lists:
        parts = [collate_graphs(g[r::world]) for r in range(world)]
        for b in parts:
            b.y = torch.randn(b.num_graphs, 1)
        batches.append(parts)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as out:
        mp.spawn(_ddp_worker, args=(world, batches, args.warmup, port, out), nprocs=world)
        ranks = [json.loads(Path(out, f"rank{r}.json").read_text()) for r in range(world)]
    wall = max(r["wall"] for r in ranks)
    n = sum(len(g) for g in lists[args.warmup:])
    return {
        "mode": f"ddp {world}x1", "attn_dropout": 0.1, "bucketing": True,
        "graphs_per_s": n / wall, "graphs_per_cpu_s": n / sum(r["cpu"] for r in ranks),
        "ms_per_batch": wall / (len(lists) - args.warmup) * 1e3,
        "real_node_fraction": float("nan"), "collate_ms_per_batch": float("nan"),
    }


def profile(graphs, args) -> None:
    batches = [collate_graphs(g) for g in make_batches(graphs, args.batch_size, True)[:4]]
    model = graphormer_slim(num_tasks=1, vocab="zinc").train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, fused=True)

    def step(b):
        loss = model(b).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step(batches[0])
    with torch.profiler.profile() as prof:
        for b in batches[1:]:
            step(b)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


def fmt(x: float, spec: str) -> str:
    """``x`` formatted, or "-" for a column a row does not have (NaN)."""
    return "-" if x != x else format(x, spec)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--num-graphs", type=int, default=2816, help="molecules (11 batches of 256)")
    ap.add_argument("--warmup", type=int, default=1, help="batches run before timing")
    ap.add_argument("--omp-wait", choices=["passive", "active"], default="passive")
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of training")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--no-ddp", action="store_true", help="skip the two-process row")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    graphs, source = zinc_train_graphs(args.num_graphs)
    sizes = torch.tensor([g.num_nodes for g in graphs], dtype=torch.float)
    print(f"data: {source}, {len(graphs)} graphs, "
          f"nodes mean {sizes.mean():.1f} max {int(sizes.max())}")
    print(f"torch {torch.__version__}, threads {args.threads}, OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY', 'default')}, load avg {os.getloadavg()[0]:.1f}")
    params = graphormer_slim(num_tasks=1, vocab="zinc").num_parameters()
    print(f"model: Graphormer-slim (12 layers, hidden 80, 8 heads), {params:,} parameters")
    if args.profile:
        profile(graphs, args)
        return
    rows = []
    for mode, ad, bucket in [
        ("train", 0.1, False), ("train", 0.1, True), ("train", 0.0, False),
        ("train", 0.0, True), ("infer", 0.0, False), ("infer", 0.0, True),
        ("ceiling", 0.1, True), ("ddp", 0.1, True),
    ]:
        if mode == "ddp":
            if args.no_ddp:
                continue
            rows.append(run_ddp(graphs, args))
        else:
            rows.append(run_config(graphs, args, ad, bucket, mode))
        r = rows[-1]
        print(f"  {mode} attn_dropout={ad} bucketing={bucket}: {r['graphs_per_s']:.0f} g/s",
              file=sys.stderr)
    print(f"\n| mode  | attn dropout | bucketing | graphs/s | cpu g/s x{args.threads} | ms/batch "
          f"| real nodes | collate ms/batch |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['mode']} | {r['attn_dropout']} | {'yes' if r['bucketing'] else 'no'} "
              f"| {r['graphs_per_s']:.0f} | {r['graphs_per_cpu_s'] * args.threads:.0f} "
              f"| {r['ms_per_batch']:.0f} | {fmt(r['real_node_fraction'], '.0%')} "
              f"| {fmt(r['collate_ms_per_batch'], '.1f')} |")
    print(f"load avg after: {os.getloadavg()[0]:.1f}")
    if args.json:
        from graphnorm.run_folder import json_safe  # strict JSON: NaN (DDP rows) -> null

        args.json.write_text(json.dumps(json_safe(rows), indent=2, allow_nan=False))


if __name__ == "__main__":
    main()
