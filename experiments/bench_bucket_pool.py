"""Training speed vs size-bucket pool on ogbg-molhiv (the Graphormer of molhiv_fast.yaml).

The sampler sorts molecules by size within pools of ``pool`` batches. MolHIV's long size tail
(up to 222 atoms) makes small pools pad much: this prints, per pool size, the mean padded
size of a batch, the padded/real attention area (sum of (N+1)^2) and graphs/s of 40 training
steps at one thread.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/bench_bucket_pool.py
"""
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench_recipes import steps  # noqa: E402
from graphnorm.graph import LengthBucketSampler, collate_graphs
from graphnorm.models import build_model
from graphnorm.train.config import TrainConfig
from graphnorm.train.datamodule import GraphDataModule, graph_sizes
from graphnorm.train.model_config import model_config_for
torch.set_num_threads(1)
cfg = TrainConfig.from_yaml("experiments/configs/molhiv_fast.yaml", raw_dir=os.environ["GRAPHNORM_RAW_DIR"])
dm = GraphDataModule.from_config(cfg, progress=False); dm.setup()
ds = dm.splits["train"]; sizes = graph_sizes(ds).tolist()
for pool in [4, 16, 64]:
    sampler = LengthBucketSampler(sizes, 64, pool_batches=pool)
    idxs = list(sampler)
    random.Random(0).shuffle(idxs)
    mx = [max(sizes[i] for i in idx) for idx in idxs]
    pad = sum(len(idx) * (m + 1) ** 2 for idx, m in zip(idxs, mx)) / sum((sizes[i] + 1) ** 2 for idx in idxs for i in idx)
    batches = [collate_graphs([ds[i] for i in idx]) for idx in idxs[:40]]
    torch.manual_seed(0)
    model = build_model(model_config_for(cfg, dm.info, dm.featurizer)).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    t = steps(model, batches, opt)  # the training step bench_recipes times
    print(f"pool {pool}: mean batch max_nodes {sum(mx)/len(mx):.1f}, padded/real N^2 {pad:.2f}, {sum(b.num_graphs for b in batches)/t:.0f} graphs/s", flush=True)
