"""``graphnorm hpopt``: a hyperparameter search on Optuna (Akiba et al. 2019,
https://arxiv.org/abs/1907.10902) for a user table, written as a config ``train --config``
takes.

Each trial is an ordinary training run (``OUT/trials/trial_<n>``) of the run's base config
(what ``train --data`` would run: the ``admet`` recipe, fine-tuned from its backbone, unless
``--config``/``--recipe`` says otherwise) with a sampled learning rate, length, batch size,
dropout, weight decay, model size, loss and descriptors; a base that fine-tunes a backbone
keeps the backbone's size (a sampled one would train from scratch in some trials only);
Optuna's TPE sampler (seeded) picks them, the pruner-free objective is the validation metric
of the run's best epoch. The search stops starting trials when ``budget_s`` is spent (the last
one may run past it) or after ``trials``. The study lives in ``OUT/study.db`` (SQLite), so a
rerun with the same OUT continues it. Results: ``OUT/best.yaml`` (the best trial's config),
``OUT/trials.csv`` (every trial: parameters, val and test metric, seconds).

The validation split chooses among the trials, so the best trial's validation number is
optimistic (more so with many trials on a small split); its test number is the honest one.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import yaml

from graphnorm.tasks import REGRESSION
from graphnorm.train.plan import trial_config  # a trial's run, as planned

# TrainConfig values (and featurizer / model entries) a trial samples
SEARCH_SPACE = {
    "lr": ("log", 3e-4, 3e-3),
    "weight_decay": ("log", 1e-4, 0.1),
    "max_steps": ("choice", [750, 1500, 3000]),
    "batch_size": ("choice", [32, 64]),
    "dropout": ("choice", [0.0, 0.1, 0.2]),
    "preset": ("choice", ["small", "fast"]),
    "loss": ("choice", list(REGRESSION.losses)),  # regression only
    "descriptors": ("choice", [True, False]),  # featurizer
}


def sample(trial, task, backbone: Optional[str] = None) -> dict:
    """One trial's values, as TrainConfig keys (``descriptors`` goes into ``featurizer``);
    ``loss`` only for a task that has a choice of losses (`graphnorm.tasks.Task.losses`);
    none of the fields that shape the model (`recipes.SHAPE_FIELDS`) when the trials
    fine-tune ``backbone``, whose shape is fixed."""
    from graphnorm.train.recipes import SHAPE_FIELDS

    values = {}
    for name, (kind, *spec) in SEARCH_SPACE.items():
        if name == "loss" and len(task.losses) < 2:
            continue
        if backbone and name in SHAPE_FIELDS:
            continue
        if kind == "log":
            values[name] = trial.suggest_float(name, spec[0], spec[1], log=True)
        else:
            values[name] = trial.suggest_categorical(name, spec[0])
    return values


def best_config(base, values: dict) -> dict:
    """The YAML mapping of the best trial: the base run's data keys and its sampled values."""
    cfg = trial_config(base, values, Path("runs/best"))
    keep = ("recipe", "data", "smiles_column", "target_columns", "task", "split", "split_sizes",
            "split_seed", "featurizer", "preset", "model", "norm", "readout", "rwpe_steps",
            "local_mp", "batch_size", "lr", "end_lr", "weight_decay", "warmup_fraction",
            "dropout", "attention_dropout", "max_steps", "loss", "model_name")
    full = cfg.to_dict()
    return {k: full[k] for k in keep if full.get(k) not in (None, {}, [])}


def run_hpopt(base, out: Path, budget_s: Optional[float], trials: Optional[int] = None,
              seed: int = 0) -> dict:
    import optuna

    from graphnorm.tasks import HIGHER_IS_BETTER, TASKS
    from graphnorm.train.processes import train_run

    if not base.data:
        raise ValueError("hpopt searches a recipe for a user table: give --data FILE")
    if budget_s is None and trials is None:
        raise ValueError("give hpopt a budget: --max-time (e.g. 30m) and/or --trials N")
    if base.task not in TASKS:
        raise ValueError(f"hpopt: --task {base.task} could not tell the task from the table's "
                         f"labels; give --task {' or '.join(TASKS)}")
    task = TASKS[base.task]
    metric = base.metric or task.default_metric  # what each trial's run selects and reports
    out.mkdir(parents=True, exist_ok=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name="graphnorm", storage=f"sqlite:///{out / 'study.db'}", load_if_exists=True,
        direction="maximize" if HIGHER_IS_BETTER[metric] else "minimize",
        sampler=optuna.samplers.TPESampler(seed=seed))

    if base.init_from:
        print(f"[hpopt] every trial fine-tunes {base.init_from}: the model size is the "
              "backbone's, not searched (--init-from none searches it from scratch)", flush=True)

    def objective(trial) -> float:
        values = sample(trial, task, base.init_from)
        run_dir = out / "trials" / f"trial_{trial.number}"
        started = time.time()
        result = train_run(trial_config(base, values, run_dir))
        trial.set_user_attr("test", result[f"test_{metric}"])
        trial.set_user_attr("seconds", round(time.time() - started, 1))
        print(f"[hpopt] trial {trial.number}: val {metric} {result[f'val_{metric}']:.4f}, test "
              f"{result[f'test_{metric}']:.4f} ({time.time() - started:.0f} s) {values}", flush=True)
        return result[f"val_{metric}"]

    study.optimize(objective, n_trials=trials, timeout=budget_s)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        raise RuntimeError(f"hpopt: no trial finished within the budget; see {out / 'trials'}")
    best = study.best_trial
    config = best_config(base, dict(best.params))
    (out / "best.yaml").write_text(
        f"# graphnorm hpopt: best of {len(done)} trials by val {metric} "
        f"{best.value:.4f} (its test {metric}: {best.user_attrs.get('test', float('nan')):.4f})\n"
        + yaml.safe_dump(config, sort_keys=False))
    study.trials_dataframe().to_csv(out / "trials.csv", index=False)
    summary = {"metric": metric, "trials": len(done), "best_trial": best.number,
               "best_val": best.value, "best_test": best.user_attrs.get("test"),
               "best_params": best.params}
    (out / "hpopt.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"[hpopt] best of {len(done)} trials: trial {best.number}, val {metric} "
          f"{best.value:.4f}, test {best.user_attrs.get('test')}; config -> {out / 'best.yaml'} "
          f"(graphnorm train --config {out / 'best.yaml'} --out runs/final)", flush=True)
    return summary
