"""Time budgets, the whole-run history after --resume, BN recalibration, weight decay."""
import json
import math

import pandas as pd
import pytest
import torch

from graphnorm.graph import Graphormer, GraphormerConfig, collate_graphs
from graphnorm.norms import BatchNorm, recalibrate_batch_stats
from graphnorm.train.config import TrainConfig, parse_duration
from graphnorm.train.module import decay_groups
from graphnorm.train.run import train
from graphnorm.train.schedule import lr_factor

from tiny_runs import tiny_config


@pytest.mark.parametrize("text,seconds", [("25m", 1500), ("1h30m", 5400), ("90s", 90),
                                          ("1.5h", 5400), ("00:02:05", 125)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["25x", "-5m", "0s", "25", "", "m"])
def test_bad_budget_fails_at_config_time(text):
    with pytest.raises(ValueError, match="max_time"):
        TrainConfig(max_time=text)


def test_an_epoch_limit_beside_a_time_budget_is_flagged():
    """Flagged by the config, warned by train() once per run (a benchmark copies its config
    for every run, so the config itself does not warn)."""
    both = TrainConfig(max_time="45m", max_epochs=20)  # e.g. --max-time on a config with epochs
    assert "stops before its learning rate has decayed" in both.budget_warning()
    assert TrainConfig(max_time="45m", max_epochs=-1).epochs_limit == -1  # time alone
    assert TrainConfig(max_time="45m", max_epochs=-1).budget_warning() is None
    assert TrainConfig(max_epochs=20).budget_warning() is None
    with pytest.raises(ValueError, match="needs a time budget"):
        TrainConfig(max_epochs=-1)
    with pytest.raises(ValueError, match="max_epochs must be >= 1"):
        TrainConfig(max_epochs=0)


def test_time_schedule_warms_up_then_decays():
    assert lr_factor(0.0, 0.1, 0.0) == 0.0
    assert lr_factor(0.05, 0.1, 0.0) == pytest.approx(0.5)
    assert lr_factor(0.1, 0.1, 0.0) == pytest.approx(1.0)
    assert lr_factor(0.55, 0.1, 0.0) == pytest.approx(0.5)
    assert lr_factor(1.0, 0.1, 0.01) == pytest.approx(0.01)


def test_budget_ending_inside_the_first_epoch_still_scores(raw_dir, cache_root, zinc_subset, tmp_path):
    # 2000 graphs at batch 8 take far longer than 2 s: the Timer stops mid-epoch, Lightning
    # validates the partial epoch, and the run is scored like any other
    cfg = tiny_config(raw_dir, cache_root, tmp_path, max_time="2s", max_epochs=None,
                      limit_train=2000, batch_size=8)
    result = train(cfg)
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert (tmp_path / "best.ckpt").is_file() and saved["best_epoch"] == 1
    assert saved["stopped_by"] == "max_time" and saved["budget_s"] == 2
    assert 0 < saved["steps"] < 250 and saved["wall_time_s"] < 60
    assert math.isfinite(result["test_mae"])


def test_resume_reports_the_whole_run(raw_dir, cache_root, zinc_subset, tmp_path):
    import warnings

    first = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # above every filter: the logger must have no cause
        second = train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=4, resume=True))
    assert not [w for w in caught if "exists and is not empty" in str(w.message)
                and "Checkpoint directory" not in str(w.message)]
    log = pd.read_csv(tmp_path / "logs" / "metrics.csv")
    val = log.dropna(subset=["val/mae"])
    assert val["epoch"].tolist() == [0, 1, 2, 3]  # history of both sessions
    assert log.dropna(subset=["train/loss"])["step"].is_monotonic_increasing
    assert second["wall_time_s"] > first["wall_time_s"]  # not just the resumed part
    # CPU too: the first session's, up to its last checkpoint, plus the second's (~2x)
    assert second["cpu_time_s"] > 1.4 * first["cpu_time_s"]
    assert second["steps"] == 16 and second["train_graphs_per_s"] > 0
    assert second["best_epoch"] in (1, 2, 3, 4)  # epochs count from 1
    assert not list(tmp_path.rglob("metrics.part*.csv")) and not (tmp_path / "history").exists()


def test_a_new_run_never_overwrites_a_trained_one(raw_dir, cache_root, zinc_subset, tmp_path):
    train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=1))
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.ckpt")}
    with pytest.raises(FileExistsError, match=r"already holds a run \(best.ckpt, last.ckpt, "
                       r"metrics.json\): --resume continues it"):
        train(tiny_config(raw_dir, cache_root, tmp_path, max_epochs=1))
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.ckpt")} == before


def _bn_model():
    torch.manual_seed(0)
    return Graphormer(GraphormerConfig(num_layers=1, hidden=16, ffn_hidden=16, heads=4, norm="sep:bn+ln"))


def test_recalibration_averages_batch_statistics(zinc_subset):
    graphs = [zinc_subset["train"][i] for i in range(96)]
    batches = [collate_graphs(graphs[i:i + 32]) for i in (0, 32, 64)]

    def first_bn(model):
        return [m for m in model.modules() if isinstance(m, BatchNorm)][0]

    singles = []
    for b in batches:  # each batch's statistics alone
        m = _bn_model()
        recalibrate_batch_stats(m, [b])
        singles.append(first_bn(m).running_mean)
    model = _bn_model().eval()
    assert recalibrate_batch_stats(model, batches) == 3 and not model.training  # mode kept
    # the first BN of the stack sees the same inputs in every call, so its estimate is
    # exactly the average (later ones see earlier layers' batch statistics in train mode)
    torch.testing.assert_close(first_bn(model).running_mean, torch.stack(singles).mean(0),
                               atol=1e-5, rtol=0)
    assert not torch.allclose(singles[0], singles[1])  # the batches do differ
    ln = Graphormer(GraphormerConfig(num_layers=1, hidden=16, ffn_hidden=16, heads=4, norm="ln"))
    assert recalibrate_batch_stats(ln, batches) == 0


def test_bucketed_training_leaves_random_batch_statistics(raw_dir, cache_root, zinc_subset, tmp_path):
    """After size-bucketed training the checkpoint's BN statistics describe random batches,
    not the last size buckets (fails without the recalibration callback)."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.train.datamodule import GraphDataModule

    cfg = tiny_config(raw_dir, cache_root, tmp_path, max_epochs=1, limit_train=1024, batch_size=32,
                      dropout=0.0, attention_dropout=0.0)
    train(cfg)
    loaded = load_checkpoint(tmp_path / "best.ckpt")
    bns = [m for m in loaded.model.modules() if isinstance(m, BatchNorm)]
    saved = [bn.running_mean.clone() for bn in bns]
    dm = GraphDataModule("zinc-subset", 32, str(raw_dir), str(cache_root), limit_train=1024,
                         progress=False)
    dm.setup()
    recalibrate_batch_stats(loaded.model, dm.random_batches(8, seed=0))  # the callback's seed
    for before, bn in zip(saved, bns):
        torch.testing.assert_close(before, bn.running_mean, atol=1e-5, rtol=0)


@pytest.mark.parametrize("norm,source,random_runs", [("sep:bn+bn", "training", False),
                                                      ("sep:bn+bn", "random", True),
                                                      ("sep:isobn+bn", "training", True)])
def test_recalibration_from_training_batches_runs_no_extra_batch(raw_dir, cache_root, tmp_path,
                                                                 monkeypatch, norm, source, random_runs):
    """--recalibrate-from training: the statistics come from the training batches' own moments,
    so no random batch is drawn; IsoBN, which keeps none, falls back to random batches."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.train.datamodule import GraphDataModule

    drawn = []
    draw = GraphDataModule.random_batches
    monkeypatch.setattr(GraphDataModule, "random_batches",
                        lambda self, *a, **k: drawn.append(a) or draw(self, *a, **k))
    cfg = tiny_config(raw_dir, cache_root, tmp_path, max_epochs=2, limit_train=256, batch_size=32,
                      norm=norm, recalibrate_source=source)
    train(cfg)
    assert bool(drawn) == random_runs
    bn = [m for m in load_checkpoint(tmp_path / "best.ckpt").model.modules() if isinstance(m, BatchNorm)]
    assert all(m.running_var.min() > 0 for m in bn)
    assert not bn or any(m.running_mean.abs().sum() > 0 for m in bn)


def test_only_linear_weights_are_decayed():
    model = Graphormer(GraphormerConfig(num_layers=2, hidden=16, ffn_hidden=16, heads=4,
                                        local_mp="gine", rwpe_steps=4))
    decay, no_decay = decay_groups(model)
    ids = {id(p) for p in decay}
    assert id(model.vnode) not in ids and id(model.attn_bias.edge.hop_weight) not in ids
    assert id(model.attn_bias.virtual_distance) not in ids
    assert id(model.blocks[0].attn.qkv.weight) in ids and id(model.blocks[0].attn.qkv.bias) not in ids
    assert len(decay) + len(no_decay) == len(list(model.parameters()))


def test_ema_validates_and_saves_the_average_with_its_own_bn_statistics(raw_dir, cache_root, zinc_subset, tmp_path):
    """--ema-decay: best.ckpt holds the averaged weights (the live ones under
    current_model_state), and their BN statistics are those re-estimated for the averaged
    weights before that validation -- not the live model's, not stale ones."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.train.datamodule import GraphDataModule

    cfg = tiny_config(raw_dir, cache_root, tmp_path, ema_decay=0.9)
    result = train(cfg)
    ckpt = torch.load(tmp_path / "best.ckpt", map_location="cpu", weights_only=False)
    avg, live = ckpt["state_dict"], ckpt["current_model_state"]
    weights = [k for k, v in avg.items() if v.is_floating_point() and "running" not in k]
    assert any(not torch.equal(avg[k], live[k]) for k in weights)
    model = load_checkpoint(tmp_path / "best.ckpt").model
    for k, v in model.state_dict().items():
        assert torch.equal(v, avg[f"model.{k}"]), k
    # the statistics of the averaged weights, from the recalibration batches of that epoch
    dm = GraphDataModule.from_config(cfg, progress=False)
    dm.setup()
    stats = {k: v.clone() for k, v in model.state_dict().items() if "running" in k}
    assert stats and any(v.abs().sum() > 0 for k, v in stats.items() if "running_mean" in k)
    recalibrate_batch_stats(model, dm.random_batches(cfg.recalibrate_batches, seed=cfg.seed + result["best_epoch"] - 1))
    for k, v in stats.items():
        torch.testing.assert_close(model.state_dict()[k], v, rtol=1e-5, atol=1e-6, msg=k)
    resumed = train(tiny_config(raw_dir, cache_root, tmp_path, ema_decay=0.9, max_epochs=3, resume=True))
    assert resumed["epochs"] == 3 and math.isfinite(resumed["test_mae"])


def test_ema_decay_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="ema_decay must lie in"):
        TrainConfig(ema_decay=1.5)
