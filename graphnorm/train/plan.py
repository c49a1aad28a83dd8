"""Run plans: the second half of config resolution (graphnorm/train/resolve.py).

``resolve_config`` turns what a user gave into one TrainConfig; the functions here turn that
config into every run it stands for, each with its final config: an ensemble's members, a
benchmark's variant x seed runs, an hpopt trial, a TDC suite task, and a run's epoch limit
once its data's batches per epoch are known. ``benchmark``, ensemble training, ``hpopt`` and
the TDC suite only execute these plans; no other module edits a config after resolution
(tests/train/test_config_frozen_after_plan.py checks it, and TrainConfig is frozen).

Pure: what a plan needs from outside (which run folders hold a ``last.ckpt`` or a finished
run, a variant's folder name, the batches per epoch, a boosters file built elsewhere) is
handed in as an argument, so a plan can be built and checked without a file system.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from graphnorm.run_folder import member_dir

from .config import TrainConfig
from .recipes import features_it_reads, recipe_backbone, settle_backbone

__all__ = ["PlannedRun", "benchmark_grid", "benchmark_runs", "ensemble_members",
           "for_worker", "step_budget", "trial_config", "with_boosters"]

# a fact about run folders handed in by the executor: e.g. "holds a last.ckpt"
FolderFact = Callable[[Path], bool]


def for_worker(cfg: TrainConfig, parallel: bool, quiet: bool = False) -> TrainConfig:
    """``cfg`` as a run trains it in a spawned worker beside others (``parallel``): one
    thread unless ``threads`` says otherwise (independent one-thread runs use a CPU's cores
    better than one run with many), and with ``quiet`` no progress bars (ensemble members
    share one terminal). Unchanged when the run trains in this process."""
    if not parallel:
        return cfg
    changes = dict(threads=cfg.threads or 1)
    if quiet:
        changes["progress"] = False
    return dataclasses.replace(cfg, **changes)


# ---- one run: its epoch limit once the data is known -------------------------------------

def step_budget(cfg: TrainConfig, steps_per_epoch: int) -> TrainConfig:
    """The epoch limit of data with ``steps_per_epoch`` batches: ``max_steps`` in epochs,
    raised to ``min_epochs`` when given; with max_epochs too, the lower limit wins (a
    config's max_epochs: 10000 must not hide a --max-steps 10 on the command line).
    Either way the limit is rounded up to whole validation intervals
    (``val_every_steps``), so the last epoch is validated. Unchanged under max_time."""
    if cfg.max_time or (cfg.max_steps is None and cfg.max_epochs is None):
        return cfg
    epochs = cfg.max_epochs
    if cfg.max_steps is not None:
        epochs = max(1, -(-cfg.max_steps // max(1, steps_per_epoch)), cfg.min_epochs or 0)
        if cfg.max_epochs is not None:  # never -1 here: that needs max_time
            epochs = min(epochs, cfg.max_epochs)
    every = cfg.val_every_epochs(steps_per_epoch)
    return dataclasses.replace(cfg, max_epochs=-(-epochs // every) * every)


# ---- ensembles (graphnorm/train/ensemble.py) ----------------------------------------------

def ensemble_members(cfg: TrainConfig, resumable: FolderFact,
                     parallel: bool = False) -> list[TrainConfig]:
    """The members' run configs: the graph models (seeds seed..seed+N-1 into
    ``OUT/model_<k>``, resumed where ``resumable(folder)``: it holds a last.ckpt), then the
    tree model when it is a member (``OUT/forest`` or ``OUT/gbm``; never resumed: it trains
    in one go). ``parallel``: the members train in spawned workers (`for_worker`)."""
    from graphnorm.models import tree_kind

    out = Path(cfg.out)
    members = [dataclasses.replace(cfg, seed=cfg.seed + k, out=str(out / member_dir(k)),
                                   ensemble=1, tree_member=False,
                                   resume=resumable(out / member_dir(k)))
               for k in range(cfg.ensemble)]
    if cfg.tree_member:
        kind = tree_kind(cfg.tree_model)
        members.append(dataclasses.replace(cfg, model_name=kind.name, out=str(out / kind.member_dir),
                                           ensemble=1, tree_member=False, resume=False,
                                           init_from=None))
    return [for_worker(m, parallel, quiet=True) for m in members]


# ---- benchmarks (graphnorm/bench/benchmark.py) --------------------------------------------

@dataclass(frozen=True)
class PlannedRun:
    """One (model, norm, seed) run of a benchmark: ``index`` counts from 1 in plan order;
    ``cfg`` None: the run is finished (skipped, nothing to train)."""
    index: int
    model: str
    norm: str
    seed: int
    out: Path
    cfg: Optional[TrainConfig]


def benchmark_grid(cfg: TrainConfig, models: Sequence[str], norms: Sequence[str],
                   seeds: int) -> list[tuple[str, str, int]]:
    """Every (model, norm, seed), seed-major: an interrupted campaign leaves whole seeds,
    i.e. paired comparisons. Graphormers once per norm, the other models (their own fixed
    norms) once per seed."""
    from graphnorm.models import model_kind

    return [(m, n, s) for s in range(seeds) for m in models
            for n in (norms if model_kind(m).norm_variants else [cfg.norm])]


def benchmark_runs(cfg: TrainConfig, models: Sequence[str], norms: Sequence[str], seeds: int,
                   out: Path, *, folder: Callable[[str, str], str], finished: FolderFact,
                   resumable: FolderFact, repeats: bool = False,
                   parallel: bool = False) -> list[PlannedRun]:
    """Every run of `benchmark_grid` in ``out/runs/<folder(model, norm)>/seed<k>``, with its
    config: finished ones (``finished(folder)``) get none; the others are resumed where
    ``resumable(folder)`` (a last.ckpt). With ``repeats`` (own tables) seed k also draws its
    own split (split seed k). ``parallel``: the runs train in spawned workers (`for_worker`)."""
    planned = []
    for k, (model, norm, seed) in enumerate(benchmark_grid(cfg, models, norms, seeds), 1):
        run_dir = out / "runs" / folder(model, norm) / f"seed{seed}"
        run_cfg = None
        if not finished(run_dir):
            run_cfg = for_worker(_benchmark_run(cfg, model, norm, seed, run_dir, folder,
                                                resumable(run_dir), repeats), parallel)
        planned.append(PlannedRun(k, model, norm, seed, run_dir, run_cfg))
    return planned


def _benchmark_run(cfg: TrainConfig, model: str, norm: str, seed: int, run_dir: Path,
                   folder: Callable[[str, str], str], resume: bool, repeats: bool) -> TrainConfig:
    from graphnorm.models import model_kind

    own = model == cfg.model_name  # a config's preset and `model:` overrides are its own
    # model's; the other models of --models run at their default preset
    init_from = cfg.init_from and cfg.init_from.replace("{variant}", folder(model, norm))
    tree = model_kind(model).tree
    run_cfg = dataclasses.replace(cfg, model_name=model, norm=norm, seed=seed,
                                  split_seed=seed if repeats else cfg.split_seed,
                                  out=str(run_dir), resume=resume, init_from=init_from,
                                  preset=cfg.preset if own else None,
                                  # a tree model is an ensemble of trees already
                                  ensemble=1 if tree else cfg.ensemble,
                                  tree_member=cfg.tree_member and not tree,
                                  tree_features=(features_it_reads(model, cfg.tree_features)
                                                 if tree else cfg.tree_features),
                                  model=dict(cfg.model) if own else {})
    # the recipe's backbone serves the variants it fits; the others train from scratch
    return settle_backbone(run_cfg, given=init_from != recipe_backbone(cfg))


# ---- hpopt (graphnorm/train/hpopt.py) -----------------------------------------------------

def trial_config(base: TrainConfig, values: dict, out: Path) -> TrainConfig:
    """One hpopt trial's run: ``base`` with the trial's sampled ``values`` (TrainConfig keys;
    ``descriptors`` goes into ``featurizer``), its length from ``max_steps`` alone, in ``out``,
    the graph model alone (a trial scores it, not an ensemble), quiet."""
    values = dict(values)
    featurizer = dict(base.featurizer or {}, descriptors=values.pop("descriptors"))
    cfg = dataclasses.replace(base, **values, featurizer=featurizer, max_epochs=None,
                              max_time=None, out=str(out), resume=False, ensemble=1,
                              tree_member=False,  # a trial scores the graph model alone
                              progress=False)
    # a backbone steps aside (with a note) in a trial whose sampled preset it was not trained as
    return settle_backbone(cfg, given=False)


# ---- the TDC suite (graphnorm/bench/tdc_suite.py) -----------------------------------------

def with_boosters(cfg: TrainConfig, boosters: str) -> TrainConfig:
    """A suite task's config reading the ADMET boosters file ``boosters`` (the task's
    leave-own-task-out file, built by the suite before the task trains)."""
    return dataclasses.replace(cfg, admet_boosters=str(boosters))
