"""Command line: ``graphnorm train | predict | embed | benchmark | hpopt | compare | analyze |
explain | serve``.

Heavy imports happen inside each command so ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

# torch-free registries: --help stays instant
from graphnorm.data.info import DATASET_INFO, METRICS, SPLITS, TASK_CHOICES
from graphnorm.graph.options import FINGERPRINT_AT, LOCAL_MP, READOUTS, SEP_SLOTS
from graphnorm.models import PRESETS, RUNNABLE_MODELS, TREE_MODELS, model_kind, presets_help
from graphnorm.tasks import REGRESSION
from graphnorm.train.recipes import RECIPE_NAMES

DESCRIPTION = ("Graphormer with separate normalization (SepNorm) for molecular property "
               "prediction: train, predict, explain and serve models of your own tables and "
               "the ZINC, MolHIV and TDC ADMET benchmarks.")


TRAIN_DEFAULTS_NOTE = ("Without --config, the recipe measured for the data (--recipe auto, "
                       "graphnorm/train/recipes.py) sets the model and training; a --config file "
                       "replaces it (its values over TrainConfig's defaults, graphnorm/train/"
                       "config.py), and flags replace both.")


def _show_defaults(parser: argparse.ArgumentParser, train: bool = True) -> None:
    """Append '(default: ...)' to each optional flag's help: argparse's own default, else
    (train=True) the TrainConfig field's (train flags default to None so that only given
    flags override a --config file, which hides the real default from argparse)."""
    from graphnorm.train.config import TrainConfig

    from graphnorm.train.recipes import RECIPES

    cfg = TrainConfig() if train else None
    derived = {"max_epochs": f"{cfg.epochs_limit}; no limit when --max-time is set"} if train else {}
    by_recipe = {k for r in RECIPES.values() for k in r} if train else set()
    for action in parser._actions:
        if (action.required or action.help == argparse.SUPPRESS
                or "(default" in (action.help or "")):
            continue
        value = action.default if action.default not in (None, argparse.SUPPRESS) else \
            derived.get(action.dest, getattr(cfg, action.dest, None))
        if action.dest in by_recipe and action.default in (None, argparse.SUPPRESS):
            # the recipe decides first; a --config file falls back to TrainConfig's value
            shown = "the recipe's" + ("" if value is None or isinstance(value, (bool, dict))
                                      else f"; under a config file: {value}")
            action.help = f"{action.help} (default: {shown})" if action.help else f"default: {shown}"
            continue
        if value is None or isinstance(value, (bool, dict)):
            continue
        action.help = f"{action.help} (default: {value})" if action.help else f"default: {value}"


def _add_train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (see experiments/configs/)")
    p.add_argument("--dataset", choices=list(DATASET_INFO))
    p.add_argument("--model", dest="model_name", choices=list(RUNNABLE_MODELS),
                   help="graphormer (default), a PyG baseline: gine, gin-vn, or (own tables) "
                   "a tree model: rf (random forest on Morgan counts), gbm (LightGBM on "
                   "MapLight features: ECFP + Avalon counts, ErG, RDKit descriptors)")
    p.add_argument("--preset", choices=sorted({p for table in PRESETS.values() for p in table}),
                   help="model size (default: the recipe's, i.e. fast for the Graphormer of "
                   "--recipe auto; a config file without recipe: slim for the Graphormer, base "
                   f"for GNNs): {presets_help(mark_default=False)}")
    p.add_argument("--readout", choices=list(READOUTS),
                   help="graphormer head input (default vnode); GNNs: sum or mean pooling")
    p.add_argument("--rwpe-steps", dest="rwpe_steps", type=int,
                   help="graphormer: random-walk PE with this many steps (default 0 = off)")
    p.add_argument("--local-mp", dest="local_mp", choices=list(LOCAL_MP),
                   help="graphormer: GINE message passing beside attention in every block")
    p.add_argument("--fingerprint-bits", dest="fingerprint_bits", type=int,
                   help="featurizer: each molecule's Morgan fingerprint (radius 2) of this many "
                   "bits joins the [VNode] (graphormer, gin-vn); 0 = none (default)")
    p.add_argument("--descriptors", dest="descriptors", action="store_const", const=True,
                   help="featurizer: each molecule's RDKit 2D descriptors (205 numbers, "
                   "standardized on the training split) join the head's input (or the "
                   "[VNode], --descriptors-at vnode)")
    p.add_argument("--no-descriptors", dest="descriptors", action="store_const", const=False,
                   help="featurizer: no RDKit descriptors (when a recipe has them)")
    p.add_argument("--descriptors-at", dest="descriptors_at", choices=list(FINGERPRINT_AT),
                   help="graphormer: where the descriptors enter (default head)")
    p.add_argument("--fingerprint-dropout", dest="fingerprint_dropout", type=float,
                   help="model: dropout on those bits in training (default 0)")
    p.add_argument("--fingerprint-at", dest="fingerprint_at", choices=list(FINGERPRINT_AT),
                   help="graphormer: the bits join the [VNode] before the first block (default) "
                   "or the head's input beside the readout (no [VNode] norm sees them)")
    p.add_argument("--max-time", dest="max_time",
                   help="wall-time budget of the whole run, e.g. 25m, 1h30m, 90s; the LR "
                   "schedule spans it")
    p.add_argument("--norm", help="norm spec, e.g. ln, sep:bn+ln, isobn (see graphnorm.norms)")
    p.add_argument("--sep-slots", dest="sep_slots", choices=list(SEP_SLOTS))
    p.add_argument("--recipe", choices=list(RECIPE_NAMES),
                   help="named training recipe under the flags: auto (default without --config: "
                   "small-table for --data, molhiv-fast, cpu-fast for ZINC), slim (the paper's "
                   "GPU recipe), ... (graphnorm/train/recipes.py)")
    p.add_argument("--max-steps", dest="max_steps", type=int,
                   help="optimizer steps (epochs = steps / batches per epoch) when no "
                   "--max-epochs or --max-time is given")
    p.add_argument("--target-transform", dest="target_transform", choices=["auto", "none"],
                   help="auto (default): fit positive, right-skewed regression targets in log10 "
                   "units, predict in yours; none: raw units")
    p.add_argument("--val-every-steps", dest="val_every_steps", type=int,
                   help="validate about every N optimizer steps (whole epochs) instead of "
                   "every epoch: cheaper on small tables")
    p.add_argument("--max-epochs", dest="max_epochs", type=int,
                   help="epoch limit; -1 lifts a config's limit, so that the time budget alone "
                   "ends the run (the learning rate follows that budget)")
    p.add_argument("--batch-size", dest="batch_size", type=int)
    p.add_argument("--bucket-pool", dest="bucket_pool", type=int,
                   help="training batches are cut from size-sorted pools of this many batches "
                        "(less padding; default 4)")
    p.add_argument("--random-batches", dest="bucket_by_size", action="store_const", const=False,
                   help="training batches of random molecules, not size-sorted (more padding, "
                        "slower; BatchNorm then sees every size in each batch)")
    p.add_argument("--lr", type=float)
    p.add_argument("--loss", choices=list(REGRESSION.losses),
                   help="regression loss on standardized targets: l1 (MAE) or mse (RMSE)")
    p.add_argument("--attention-dropout", dest="attention_dropout", type=float)
    p.add_argument("--dropout", type=float)
    p.add_argument("--ema-decay", dest="ema_decay", type=float,
                   help="keep an exponential moving average of the weights (e.g. 0.999 per "
                   "step); validation, checkpoints and predictions use it (default: off)")
    p.add_argument("--uniformity-weight", dest="uniformity_weight", type=float,
                   help="lambda of the uniformity term on [VNode] embeddings (seed paper Eq. 8)")
    p.add_argument("--init-from", dest="init_from",
                   help="fine-tune: start from this checkpoint's weights (all but the head), "
                   "or from a backbone shipped with graphnorm by name (zinc250k: the small-table "
                   "recipe's model; RDKit descriptors may then be added at the head); none: from scratch; "
                   "same model and featurizer settings. benchmark: {variant} in the path "
                   "becomes each run's variant folder, e.g. pre/runs/{variant}/seed0")
    p.add_argument("--raw-dir", dest="raw_dir", help="offline raw data (default: $GRAPHNORM_RAW_DIR)")
    p.add_argument("--cache-root", dest="cache_root")
    p.add_argument("--limit-train", dest="limit_train", type=int)
    p.add_argument("--limit-eval", dest="limit_eval", type=int)
    p.add_argument("--accelerator", help="auto (default: GPU if any), cpu, gpu, ...")
    p.add_argument("--devices", type=int)
    p.add_argument("--strategy")
    p.add_argument("--threads", type=int, help="CPU threads per run (default: one per core)")
    p.add_argument("--checkpoint-every", dest="checkpoint_every_n_steps", type=int)
    p.add_argument("--no-progress", dest="progress", action="store_const", const=False)
    own = p.add_argument_group("own data (instead of --dataset; README: Your own molecules)")
    own.add_argument("--data", help="table of molecules: .csv, .tsv, .smi, .sdf, .parquet")
    own.add_argument("--smiles-column", dest="smiles_column",
                     help="SMILES column (default: the column named 'smiles')")
    own.add_argument("--target-columns", dest="target_columns", nargs="+", metavar="COLUMN",
                     help="target columns, one model output each (default: every other "
                     "numeric column)")
    own.add_argument("--task", choices=list(TASK_CHOICES),
                     help="auto (default): classification when every label is 0 or 1, else "
                     "regression; classification: 0/1 labels, ROC-AUC")
    own.add_argument("--metric", choices=list(METRICS),
                     help="picks the checkpoint and is reported (default: rmse for regression, "
                     "rocauc for classification)")
    own.add_argument("--forest-member", dest="forest_member", action=argparse.BooleanOptionalAction,
                     help="add the Morgan-count random forest as one more ensemble member "
                     "(OUT/forest; predict averages it in). Default: on for classification "
                     "tables under the small-table recipe, off otherwise")
    own.add_argument("--forest-model", dest="forest_model", choices=list(TREE_MODELS),
                     help="the tree model of --forest-member: rf (OUT/forest) or gbm (OUT/gbm)")
    own.add_argument("--tree-weight", dest="tree_weight", metavar="{equal,val,W,val:W}",
                     help="the tree member's weight in the ensemble mean: equal (one member like "
                     "the others), val (chosen on the validation split, graph members share "
                     "the rest), a fixed weight W in [0, 1], or val:W (W unless validation "
                     "prefers another weight by more than one bootstrap standard error). "
                     "Default: val for regression tables under the small-table recipe, equal "
                     "otherwise")
    own.add_argument("--split", help="scaffold, random, column:NAME (train/val/test per row), "
                     "file:RUN/splits.json (a previous run's split) or tdc:NAME (NAME says "
                     "test for the fixed test rows; the rest gets PyTDC's scaffold split)")
    own.add_argument("--split-sizes", dest="split_sizes", help="train,val,test fractions")
    own.add_argument("--split-seed", dest="split_seed", type=int,
                     help="seed of the scaffold/random split (apart from --seed)")


def _train_config(args: argparse.Namespace, keys: Sequence[str]):
    from graphnorm.train.config import TrainConfig, read_yaml
    from graphnorm.train.recipes import apply_recipe, settle_backbone, table_size_rules

    overrides = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    values = dict(read_yaml(args.config), **overrides) if args.config else overrides
    # no config file: the recipe measured for the data (recipes.py); a file names its own
    recipe = values.get("recipe") or (None if args.config else "auto")
    merged = apply_recipe(values, recipe)
    wants_task = merged.get("task", "auto") == "auto"
    table = _user_table(merged) if merged.get("data") and (
        wants_task or merged.get("recipe") == "small-table") else None
    if table is not None and wants_task:
        merged = dict(merged, task=_table_task(table, merged))
    if table is not None and merged.get("recipe") == "small-table":
        merged = table_size_rules(merged, values, len(table))
    cfg = TrainConfig.from_dict(merged)
    for key, block in BLOCK_KEYS.items():  # flags that set one key of a config block
        if getattr(args, key, None) is not None:
            cfg = dataclasses.replace(cfg, **{block: {**getattr(cfg, block), key: getattr(args, key)}})
    return settle_backbone(cfg, given="init_from" in values)


def _user_table(values: dict):
    """The user table, read once for the rules that follow the data (its size, its labels);
    None for a table that cannot be read: the run fails with its message when it reads it."""
    from graphnorm.data.table import read_table

    try:
        return read_table(values["data"], values.get("smiles_column"))
    except Exception:
        return None


def _table_task(table, values: dict) -> str:
    """``--task auto`` decided from the table's labels (and said); "auto" when they cannot
    be read: the run fails with its own message when it reads them."""
    from graphnorm.data.table_dataset import auto_task
    from graphnorm.data.table_split import split_kind

    try:
        kind, arg = split_kind(values.get("split") or "scaffold")
        exclude = [arg] if kind in ("column", "tdc") else []
        task, note = auto_task(table, values.get("target_columns") or [], exclude)
    except Exception:
        return "auto"
    print(f"[graphnorm] {note}", flush=True)
    return task


# flag dest -> the TrainConfig block (dict field) it sets one key of
BLOCK_KEYS = {"fingerprint_bits": "featurizer", "fingerprint_dropout": "model",
              "fingerprint_at": "model", "descriptors": "featurizer", "descriptors_at": "model"}


TRAIN_KEYS = ("recipe", "max_steps", "val_every_steps", "target_transform", "dataset", "model_name", "readout", "rwpe_steps", "local_mp", "max_time", "preset", "norm", "sep_slots", "max_epochs", "batch_size",
              "bucket_pool", "bucket_by_size", "lr", "loss",
              "attention_dropout", "dropout", "ema_decay", "uniformity_weight", "init_from", "raw_dir", "cache_root", "limit_train",
              "limit_eval", "accelerator", "devices", "strategy", "threads", "checkpoint_every_n_steps", "progress",
              "data", "smiles_column", "target_columns", "task", "metric", "forest_member", "forest_model", "tree_weight",
              "split", "split_sizes", "split_seed")


def cmd_train(args: argparse.Namespace) -> int:
    from graphnorm.train.processes import train_run

    cfg = _train_config(args, TRAIN_KEYS + ("seed", "out", "resume", "ensemble"))
    if cfg.is_ensemble:  # members into OUT/model_<k> (and OUT/forest)
        from graphnorm.train.ensemble import train_ensemble

        train_ensemble(cfg, jobs=args.jobs)
        return 0
    result = train_run(cfg)
    if result:
        m = result["metric"]
        what = f"norm={cfg.norm}" if model_kind(cfg.model_name).norm_variants else f"model={cfg.model_name}"
        epoch = "" if result["best_epoch"] is None else f"best epoch {result['best_epoch']}, "
        print(f"[graphnorm] {result['dataset']} {what} seed={cfg.seed}: "
              f"val {m} {result[f'val_{m}']:.4f}, test {m} {result[f'test_{m}']:.4f} "
              f"({epoch}{result['wall_time_s']} s) -> {cfg.out}/metrics.json")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_predict  # predict/embed: inference/cli.py

    return run_predict(args)


def cmd_embed(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_embed

    return run_embed(args)


def cmd_benchmark(args: argparse.Namespace) -> int:
    from graphnorm.bench.benchmark import run_benchmark

    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    if args.suite:  # one benchmark per task of the suite
        from graphnorm.bench.tdc_suite import run_tdc_suite

        run_tdc_suite(args, lambda a: _train_config(a, TRAIN_KEYS + ("ensemble",)),
                      lambda cfg, out: run_benchmark(
                          cfg, norms=_norms(args, cfg), seeds=args.seeds, out=out, jobs=args.jobs,
                          models=models, summary_only=args.summary_only, repeats=True,
                          baseline=args.baseline))
        return 0
    cfg = _train_config(args, TRAIN_KEYS + ("ensemble",))
    if args.repeats is not None and not cfg.data:
        raise ValueError("--repeats draws a new split per run: it takes a user table (--data); "
                         "the benchmark datasets have fixed splits (use --seeds)")
    run_benchmark(cfg, norms=_norms(args, cfg),
                  seeds=args.repeats or args.seeds, out=Path(args.out), jobs=args.jobs,
                  models=models, summary_only=args.summary_only,
                  repeats=args.repeats is not None, baseline=args.baseline)
    return 0


def _norms(args, cfg) -> list[str]:
    return [n.strip() for n in args.norms.split(",") if n.strip()] if args.norms else [cfg.norm]


def cmd_hpopt(args: argparse.Namespace) -> int:
    from graphnorm.train.config import parse_duration
    from graphnorm.train.hpopt import run_hpopt

    budget = parse_duration(args.max_time) if args.max_time else None
    args.max_time = None  # the search's budget, not each trial's
    cfg = _train_config(args, TRAIN_KEYS + ("seed",))
    run_hpopt(cfg, Path(args.out), budget, trials=args.trials, seed=args.search_seed)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from graphnorm.run_folder import json_safe
    from graphnorm.bench.compare import compare, format_comparison

    result = compare(Path(args.a), Path(args.b), split=args.split)
    print(format_comparison(result))
    if args.json:
        Path(args.json).write_text(json.dumps(json_safe(result), indent=2) + "\n")
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from graphnorm.analysis.analyze import analyze

    if args.dataset is not None and args.data is not None:
        raise ValueError("give --dataset NAME (a benchmark split) or --data FILE (own "
                         "molecules), not both")
    if (args.checkpoint is None) == (args.bench is None):
        raise ValueError("give --checkpoint FILE (one run, or two with --compare) or --bench "
                         "DIR (every finished run of a benchmark), one of them")
    if args.bench is not None:
        from graphnorm.analysis.seeds import analyze_benchmark

        if args.data is not None or args.compare is not None:
            raise ValueError("--bench analyzes its runs on a benchmark split: no --data, "
                             "no --compare")
        analyze_benchmark(Path(args.bench), Path(args.out), args.dataset, raw_dir=args.raw_dir,
                          split=args.split, limit=args.limit)
        return 0
    analyze(args.checkpoint, args.dataset, Path(args.out), compare=args.compare,
            raw_dir=args.raw_dir, split=args.split, limit=args.limit, data_file=args.data,
            smiles_column=args.smiles_column)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from graphnorm.explain.cli import run_explain  # issue 28: atom attributions

    return run_explain(args)


def cmd_serve(args: argparse.Namespace) -> int:
    from graphnorm.serve.cli import run_serve  # issue 28: prediction web page + JSON API

    return run_serve(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphnorm", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a Graphormer (Lightning)",
                       description=TRAIN_DEFAULTS_NOTE)
    _add_train_args(t)
    t.add_argument("--seed", type=int)
    t.add_argument("--out", help="run directory (checkpoints, logs, metrics.json)")
    t.add_argument("--resume", action="store_const", const=True, help="continue from OUT/last.ckpt")
    t.add_argument("--ensemble", type=int, help="train N models (seeds SEED..SEED+N-1, one "
                   "split) into OUT/model_<k>; predict on OUT averages them and adds <target>_std")
    t.add_argument("--jobs", type=int, default=1,
                   help="--ensemble: members trained at once, one process each")
    _show_defaults(t)
    t.set_defaults(func=cmd_train)

    from graphnorm.inference.cli import add_embed_args, add_predict_args  # torch-free

    p = sub.add_parser("predict", help="predict properties from SMILES")
    add_predict_args(p)
    p.set_defaults(func=cmd_predict)

    e = sub.add_parser("embed", help="[VNode] embedding per molecule (.npy, .csv, .parquet)")
    add_embed_args(e)
    e.set_defaults(func=cmd_embed)

    b = sub.add_parser("benchmark", help="norm variants x seeds, OGB leaderboard format",
                       description=TRAIN_DEFAULTS_NOTE, conflict_handler="resolve")
    _add_train_args(b)
    b.add_argument("--norms", help="comma list of norm specs, one table row each, e.g. "
                   "ln,bn,sep:bn+ln (default: the recipe's or config's norm)")
    # train's --norm (one spec) replaced: here it is an undocumented alias of --norms
    b.add_argument("--norm", dest="norms", help=argparse.SUPPRESS)
    b.add_argument("--models", help="comma list of models in one table, e.g. graphormer,gine "
                   "(--norms apply to the Graphormer; each baseline is one row)")
    b.add_argument("--seeds", type=int, default=3, help="number of seeds (0..N-1)")
    b.add_argument("--repeats", type=int, help="own tables: N repeated splits instead of "
                   "seeds; repeat k draws its own --split with split seed k and trains with "
                   "seed k, every model on the same split (paired)")
    b.add_argument("--ensemble", type=int, help="each run is an ensemble of N models (seeds "
                   "k..k+N-1 on the run's split, trained one after another), scored by their "
                   "mean prediction")
    b.add_argument("--baseline", help="the variant every other is paired against (default: "
                   "rf when --models has it, else ln)")
    b.add_argument("--suite", choices=["tdc-admet"], help="tdc-admet: the 22 tasks of the TDC "
                   "ADMET group under its official protocol (5 seeds, scaffold valid split, "
                   "each task's metric), one benchmark per task in OUT/<task>, the leaderboard "
                   "form in OUT/board.md")
    b.add_argument("--tasks", help="--suite: comma list of task names (default: all 22)")
    b.add_argument("--tdc-dir", dest="tdc_dir", help="--suite: a PyTDC admet_group download or "
                   "the folder holding admet_group.zip (default: $GRAPHNORM_TDC_DIR, else "
                   "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
    b.add_argument("--leaderboard", help="--suite: the leaderboard snapshot to rank against "
                   "(default: leaderboard.csv beside the archive)")
    b.add_argument("--out", required=True)
    b.add_argument("--jobs", type=int, default=1,
                   help="runs trained at once, one process each with --threads threads (1 if unset)")
    b.add_argument("--summary-only", dest="summary_only", action="store_true",
                   help="train nothing: write the summary of the runs finished so far")
    b.set_defaults(func=cmd_benchmark)
    _show_defaults(b)

    h = sub.add_parser("hpopt", help="hyperparameter search on a table (Optuna) -> best.yaml",
                       description="Trials are training runs of the table's recipe with sampled "
                       "settings, scored on the validation split; OUT/best.yaml is the best "
                       "one's config for `train --config`. " + TRAIN_DEFAULTS_NOTE,
                       conflict_handler="resolve")
    _add_train_args(h)
    h.add_argument("--max-time", dest="max_time",
                   help="budget of the whole search, e.g. 30m (no new trial starts after it)")
    h.add_argument("--trials", type=int, help="at most this many trials (also: --max-time)")
    h.add_argument("--seed", type=int, help="model seed of every trial")
    h.add_argument("--search-seed", dest="search_seed", type=int, default=0,
                   help="seed of Optuna's sampler")
    h.add_argument("--out", required=True, help="search folder: study.db (a rerun continues "
                   "it), trials/, trials.csv, best.yaml")
    h.set_defaults(func=cmd_hpopt)
    _show_defaults(h)

    c = sub.add_parser("compare", help="two benchmark variants paired by seed, across folders",
                       description="A - B per seed both have finished: mean ± std, 95 % "
                       "t-interval and wins. A and B are <benchmark out>/runs/<variant> folders, "
                       "e.g. two recipes' ln runs.")
    c.add_argument("a", help="variant folder of seed<k>/metrics.json")
    c.add_argument("b", help="the one it is compared against")
    c.add_argument("--split", default="test", choices=["val", "test"])
    c.add_argument("--json", help="also write the numbers to this file")
    c.set_defaults(func=cmd_compare)
    _show_defaults(c, train=False)

    a = sub.add_parser("analyze", help="[VNode]/token embedding analysis of a checkpoint")
    a.add_argument("--checkpoint", help="a run's best.ckpt (or any checkpoint)")
    a.add_argument("--bench", help="instead: a `graphnorm benchmark --out` folder; every "
                   "finished run, mean ± std per variant and paired against ln")
    a.add_argument("--dataset", choices=list(DATASET_INFO),
                   help="benchmark whose --split is analyzed (default: the one the checkpoint "
                   "was trained on; or --data)")
    a.add_argument("--data", help="own molecules instead: every row of a .csv/.smi/.sdf/... file")
    a.add_argument("--smiles-column", dest="smiles_column", help="--data's SMILES column")
    a.add_argument("--out", required=True)
    a.add_argument("--compare", help="second checkpoint drawn in the same figures")
    a.add_argument("--raw-dir", dest="raw_dir",
                   help="offline raw data folder holding zinc/ and molhiv/ (default: "
                   "$GRAPHNORM_RAW_DIR, else the official download)")
    a.add_argument("--split", default="test", choices=list(SPLITS))
    a.add_argument("--limit", type=int, help="use the first N graphs of the split")
    a.set_defaults(func=cmd_analyze)
    _show_defaults(a, train=False)

    from graphnorm.explain.cli import add_explain_args  # torch-free
    from graphnorm.serve.cli import add_serve_args

    x = sub.add_parser("explain", help="per-atom attributions: table + molecule drawings")
    add_explain_args(x)
    x.set_defaults(func=cmd_explain)
    _show_defaults(x, train=False)

    s = sub.add_parser("serve", help="web page and JSON API for predictions (FastAPI)")
    add_serve_args(s)
    s.set_defaults(func=cmd_serve)
    _show_defaults(s, train=False)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    # Before torch loads OpenMP: libgomp's default spin-wait collapses multi-thread training
    # when another process shares the cores (README: how long training takes).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (FileNotFoundError, FileExistsError, ValueError, RuntimeError) as err:
        if os.environ.get("GRAPHNORM_DEBUG"):  # full traceback for bug reports
            raise
        print(f"graphnorm {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
