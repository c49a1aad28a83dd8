"""Run plans (graphnorm/train/plan.py): every run a resolved config stands for, with its final
config, from facts handed in (no file system read, nothing trained)."""
from pathlib import Path

from graphnorm.train.config import TrainConfig
from graphnorm.train.plan import benchmark_runs, ensemble_members, trial_config, with_boosters


def _never(folder: Path) -> bool:
    return False


def test_ensemble_members_resume_where_told_and_plan_worker_knobs(tmp_path):
    cfg = TrainConfig(data="t.csv", ensemble=3, seed=5, out=str(tmp_path), tree_member=True,
                      tree_model="gbm", init_from="zinc250k")
    held = {tmp_path / "model_1"}
    members = ensemble_members(cfg, held.__contains__)
    assert [m.seed for m in members] == [5, 6, 7, 5]
    assert [Path(m.out).name for m in members] == ["model_0", "model_1", "model_2", "gbm"]
    assert [m.resume for m in members] == [False, True, False, False]
    assert all(m.ensemble == 1 and not m.tree_member for m in members)
    assert members[-1].model_name == "gbm" and members[-1].init_from is None
    assert all(m.threads is None and m.progress for m in members)  # trained here: as given
    parallel = ensemble_members(cfg, _never, parallel=True)
    assert all(m.threads == 1 and not m.progress for m in parallel)
    assert cfg.out == str(tmp_path) and cfg.ensemble == 3  # the resolved config is untouched


def test_benchmark_runs_skip_finished_resume_held_and_repeat_splits(tmp_path):
    cfg = TrainConfig(norm="ln", model={"num_layers": 2}, threads=4, split_seed=7)
    finished = {tmp_path / "runs" / "ln" / "seed0"}
    held = {tmp_path / "runs" / "sep-bn-ln" / "seed1"}
    folder = lambda model, norm: norm.replace(":", "-").replace("+", "-")  # noqa: E731
    plan = benchmark_runs(cfg, ["graphormer"], ["ln", "sep:bn+ln"], 2, tmp_path, folder=folder,
                          finished=finished.__contains__, resumable=held.__contains__)
    assert [(r.index, r.norm, r.seed) for r in plan] == [
        (1, "ln", 0), (2, "sep:bn+ln", 0), (3, "ln", 1), (4, "sep:bn+ln", 1)]
    assert plan[0].cfg is None  # finished: nothing to train
    assert [r.cfg.resume for r in plan[1:]] == [False, False, True]
    assert [r.cfg.split_seed for r in plan[1:]] == [7, 7, 7]
    assert plan[3].cfg.out == str(held.pop()) and plan[3].cfg.model == {"num_layers": 2}
    assert plan[3].cfg.threads == 4  # parallel workers keep an explicit thread count
    repeats = benchmark_runs(cfg, ["graphormer", "gine"], ["ln"], 2, tmp_path, folder=folder,
                             finished=_never, resumable=_never, repeats=True, parallel=True)
    assert [(r.model, r.cfg.seed, r.cfg.split_seed) for r in repeats] == [
        ("graphormer", 0, 0), ("gine", 0, 0), ("graphormer", 1, 1), ("gine", 1, 1)]
    assert repeats[1].cfg.model == {} and repeats[1].cfg.preset is None  # not its own model
    assert all(r.cfg.threads == 4 for r in repeats)


def test_trial_and_suite_task_configs():
    base = TrainConfig(data="t.csv", ensemble=3, tree_member=True, max_epochs=9,
                       featurizer={"fingerprint_bits": 8})
    cfg = trial_config(base, {"lr": 1e-3, "descriptors": True, "max_steps": 750}, Path("t/1"))
    assert (cfg.lr, cfg.max_steps, cfg.max_epochs, cfg.out) == (1e-3, 750, None, "t/1")
    assert cfg.featurizer == {"fingerprint_bits": 8, "descriptors": True}
    assert (cfg.ensemble, cfg.tree_member, cfg.progress, cfg.resume) == (1, False, False, False)
    assert with_boosters(base, "b.txt").admet_boosters == "b.txt" and base.admet_boosters is None
