"""Training-step CPU time against page faults, on real batches of ogbg-molhiv
(molhiv_fast.yaml) and ZINC-subset (zinc_subset_fast.yaml). Two levers:

- the size of the attention bias's one-hot chunks (``AttentionBias.chunk_bytes``): glibc maps
  a buffer above its mmap threshold (32 MiB at most) fresh on every allocation, so the kernel
  faults in and zeroes its pages on every step;
- malloc told to keep freed memory (mallopt: a fixed 32 MiB mmap threshold and a 1 GiB trim
  threshold, so the heap keeps its peak).

Each (dataset, chunk, malloc) runs in a fresh process: 60 size-bucketed training batches, one
warm-up pass, then two timed passes of forward + backward + AdamW at one thread. Prints user
and system CPU seconds, minor page faults, wall seconds and the load average.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/bench_malloc.py
"""
import ctypes
import os
import random
import resource
import subprocess
import sys
import time

CONFIGS = {"ogbg-molhiv": "experiments/configs/molhiv_fast.yaml",
           "zinc-subset": "experiments/configs/zinc_subset_fast.yaml"}


def measure(config: str, mode: str, chunk_mb: str) -> None:
    import torch

    from graphnorm.graph import LengthBucketSampler, collate_graphs
    from graphnorm.models import build_model
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.datamodule import GraphDataModule, graph_sizes
    from graphnorm.train.model_config import model_config_for

    if mode == "held":
        libc = ctypes.CDLL("libc.so.6")
        assert libc.mallopt(-3, 32 << 20) and libc.mallopt(-1, 1 << 30)  # M_MMAP/M_TRIM_THRESHOLD
    torch.set_num_threads(1)
    cfg = TrainConfig.from_yaml(config)
    dm = GraphDataModule.from_config(cfg, progress=False)
    dm.setup()
    ds = dm.splits["train"]
    batches_idx = list(LengthBucketSampler(graph_sizes(ds).tolist(), cfg.batch_size,
                                           pool_batches=cfg.bucket_pool, seed=0))
    random.Random(0).shuffle(batches_idx)
    batches = [collate_graphs([ds[i] for i in idx]) for idx in batches_idx[:60]]
    torch.manual_seed(0)
    model = build_model(model_config_for(cfg, dm.info, dm.featurizer)).train()
    for m in model.modules():  # the attention bias's one-hot pair descriptors, per chunk
        if hasattr(m, "chunk_bytes"):
            m.chunk_bytes = int(chunk_mb) << 20
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def one_pass():
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        for b in batches:
            loss = model(b).float().pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        after = resource.getrusage(resource.RUSAGE_SELF)
        return (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                after.ru_minflt - before.ru_minflt, time.perf_counter() - start)

    one_pass()  # warm-up: the heap grows to its peak once
    for _ in range(2):
        user, system, faults, wall = one_pass()
        print(f"| {cfg.dataset} | {chunk_mb} | {mode} | {user:.2f} | {system:.2f} | {user + system:.2f} | "
              f"{faults:,} | {wall:.2f} | {os.getloadavg()[0]:.2f} |", flush=True)


def main() -> None:
    print("| dataset | bias chunk MiB | malloc | user s | sys s | CPU s | minor faults | wall s | load |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for _ in range(2):  # interleaved, so a change of load hits every variant
        for config in CONFIGS.values():
            for chunk, mode in (("64", "default"), ("16", "default"), ("16", "held")):
                subprocess.run([sys.executable, __file__, config, mode, chunk], check=True)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        measure(*sys.argv[1:])
    else:
        main()
