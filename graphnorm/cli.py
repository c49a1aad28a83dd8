"""Command line: ``graphnorm train | predict | embed | benchmark | hpopt | compare | analyze |
explain | serve | pretrain``.

Heavy imports happen inside each command so ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

# torch-free registries: --help stays instant
from graphnorm.data.info import DATASET_INFO, SPLITS
from graphnorm.models import model_kind
from graphnorm.train.cli import add_train_args, adder, config_dests, resolved_config

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


def cmd_train(args: argparse.Namespace) -> int:
    from graphnorm.train.processes import train_run

    cfg = resolved_config(args)
    if cfg.is_ensemble:  # members into OUT/model_<k> (and OUT/forest or OUT/gbm)
        from graphnorm.train.ensemble import train_ensemble

        train_ensemble(cfg, jobs=args.jobs)
        return 0
    result = train_run(cfg)
    if result:
        m = result["metric"]
        what = f"norm={cfg.norm}" if model_kind(cfg.model_name).norm_variants else f"model={cfg.model_name}"
        epoch = "" if result["best_epoch"] is None else f"best epoch {result['best_epoch']}, "
        test = result[f"test_{m}"]  # None: a table without test rows (TDC selection)
        print(f"[graphnorm] {result['dataset']} {what} seed={cfg.seed}: "
              f"val {m} {result[f'val_{m}']:.4f}" + ("" if test is None else f", test {m} {test:.4f}")
              + f" ({epoch}{result['wall_time_s']} s) -> {cfg.out}/metrics.json")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_predict  # predict/embed: inference/cli.py

    return run_predict(args)


def cmd_embed(args: argparse.Namespace) -> int:
    from graphnorm.inference.cli import run_embed

    return run_embed(args)


def cmd_admet(args: argparse.Namespace) -> int:
    if args.explain and not args.list:  # atom attributions of one endpoint: explain/panel_cli.py
        from graphnorm.explain.panel_cli import run_admet_explain

        return run_admet_explain(args)
    if args.drawings and not args.list:
        raise ValueError("--drawings is --explain's folder: give --explain ENDPOINT too")
    from graphnorm.inference.cli import run_admet

    return run_admet(args)


def cmd_benchmark(args: argparse.Namespace) -> int:
    from graphnorm.bench.benchmark import run_benchmark

    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    if (args.final or args.ledger or args.ledger_summary) and not args.suite:
        raise ValueError("--final, --ledger and --ledger-summary belong to --suite tdc-admet")
    if args.ledger_summary:  # the count of test scorings, nothing run
        from graphnorm.bench.tdc_ledger import ledger_summary
        from graphnorm.bench.tdc_suite import ledger_path

        print(ledger_summary(ledger_path(args)), end="")
        return 0
    if not args.out:
        raise ValueError("benchmark needs --out DIR")
    if args.suite:  # one benchmark per task of the suite
        from graphnorm.bench.tdc_suite import run_tdc_suite

        run_tdc_suite(args, resolved_config,
                      lambda cfg, out: run_benchmark(
                          cfg, norms=_norms(args, cfg), seeds=args.seeds, out=out, jobs=args.jobs,
                          models=models, summary_only=args.summary_only, repeats=True,
                          baseline=args.baseline))
        return 0
    cfg = resolved_config(args)
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
    cfg = resolved_config(args)  # hpopt's --max-time is the search's budget (not a config value)
    run_hpopt(cfg, Path(args.out), budget, trials=args.trials, seed=args.search_seed)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from graphnorm.run_folder import json_safe
    from graphnorm.bench.compare import compare, format_comparison

    if args.suite:  # two selection suites, task by task, on validation
        from graphnorm.bench.tdc_versus import versus, versus_markdown
        from graphnorm.data.tdc import admet_group_dir

        if args.split != "val":
            raise ValueError("--suite compares selection suites on validation: add --split val")
        table = versus(Path(args.a), Path(args.b), admet_group_dir(args.tdc_dir),
                       args.tasks.split(",") if args.tasks else None, rule=args.rule)
        print(versus_markdown(table, args.a, args.b))
        if args.json:
            Path(args.json).write_text(table.to_json(orient="records", indent=2) + "\n")
        return 0
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


def cmd_pretrain(args: argparse.Namespace) -> int:
    from graphnorm.pretrain.cli import run_pretrain

    return run_pretrain(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphnorm", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a Graphormer (Lightning)",
                       description=TRAIN_DEFAULTS_NOTE)
    add_train_args(t, "train")  # the settings' flags (TrainConfig's schema), --config
    t_own = adder(t)  # flags of the command, not TrainConfig values
    t_own("--jobs", type=int, default=1,
          help="--ensemble: members trained at once, one process each")
    _show_defaults(t)
    t.set_defaults(func=cmd_train, config_dests=config_dests(t))

    from graphnorm.inference.cli import add_embed_args, add_predict_args  # torch-free

    p = sub.add_parser("predict", help="predict properties from SMILES")
    add_predict_args(p)
    p.set_defaults(func=cmd_predict)

    e = sub.add_parser("embed", help="[VNode] embedding per molecule (.npy, .csv, .parquet)")
    add_embed_args(e)
    e.set_defaults(func=cmd_embed)

    from graphnorm.inference.cli import add_admet_args  # torch-free

    m = sub.add_parser("admet", help="the ADMET panel of a pre-trained model: every endpoint "
                       "that held up on held-out molecules, with intervals")
    add_admet_args(m)
    from graphnorm.explain.panel_cli import add_admet_explain_args  # torch-free

    add_admet_explain_args(m)
    m.set_defaults(func=cmd_admet)

    b = sub.add_parser("benchmark", help="norm variants x seeds, OGB leaderboard format",
                       description=TRAIN_DEFAULTS_NOTE, conflict_handler="resolve")
    add_train_args(b, "benchmark")
    b_own = adder(b)
    b_own("--norms", help="comma list of norm specs, one table row each, e.g. "
          "ln,bn,sep:bn+ln (default: the recipe's or config's norm)")
    # train's --norm (one spec) replaced: here it is an undocumented alias of --norms
    b_own("--norm", dest="norms", help=argparse.SUPPRESS)
    b_own("--models", help="comma list of models in one table, e.g. graphormer,gine "
          "(--norms apply to the Graphormer; each baseline is one row)")
    b_own("--seeds", type=int, default=3, help="number of seeds (0..N-1)")
    b_own("--repeats", type=int, help="own tables: N repeated splits instead of "
          "seeds; repeat k draws its own --split with split seed k and trains with "
          "seed k, every model on the same split (paired)")
    b_own("--baseline", help="the variant every other is paired against (default: "
          "rf when --models has it, else ln)")
    b_own("--suite", choices=["tdc-admet"], help="tdc-admet: the 22 tasks of the TDC "
          "ADMET group under its official protocol (5 seeds, scaffold valid split, "
          "each task's metric), one benchmark per task in OUT/<task>, the leaderboard "
          "form in OUT/board.md")
    b_own("--tasks", help="--suite: comma list of task names (default: all 22)")
    b_own("--tdc-dir", dest="tdc_dir", help="--suite: a PyTDC admet_group download or "
          "the folder holding admet_group.zip (default: $GRAPHNORM_TDC_DIR, else "
          "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
    b_own("--leaderboard", help="--suite: the leaderboard snapshot to rank against "
          "(default: leaderboard.csv beside the archive)")
    b_own("--final", action="store_true", help="--suite: also read and score each task's "
          "test set, and append one row per (task, configuration) to the test ledger; "
          "without it the runs never see test.csv and report validation only")
    b_own("--ledger", help="--suite --final: the test ledger CSV to append to (default: "
          "experiments/results/tdc_admet/ledger.csv of the graphnorm checkout)")
    b_own("--ledger-summary", dest="ledger_summary", action="store_true",
          help="--suite: print the ledger's count of test scorings per task, run nothing")
    b_own("--out", help="the benchmark's folder (required, except with --ledger-summary)")
    b_own("--jobs", type=int, default=1,
          help="runs trained at once, one process each with --threads threads (1 if unset)")
    b_own("--summary-only", dest="summary_only", action="store_true",
          help="train nothing: write the summary of the runs finished so far")
    b.set_defaults(func=cmd_benchmark, config_dests=config_dests(b))
    _show_defaults(b)

    h = sub.add_parser("hpopt", help="hyperparameter search on a table (Optuna) -> best.yaml",
                       description="Trials are training runs of the table's recipe with sampled "
                       "settings, scored on the validation split; OUT/best.yaml is the best "
                       "one's config for `train --config`. " + TRAIN_DEFAULTS_NOTE,
                       conflict_handler="resolve")
    add_train_args(h, "hpopt")
    h_own = adder(h)
    h_own("--max-time", dest="max_time",
          help="budget of the whole search, e.g. 30m (no new trial starts after it)")
    h_own("--trials", type=int, help="at most this many trials (also: --max-time)")
    h_own("--search-seed", dest="search_seed", type=int, default=0,
          help="seed of Optuna's sampler")
    h_own("--out", required=True, help="search folder: study.db (a rerun continues "
          "it), trials/, trials.csv, best.yaml")
    h.set_defaults(func=cmd_hpopt, config_dests=config_dests(h))
    _show_defaults(h)

    c = sub.add_parser("compare", help="two benchmark variants paired by seed, across folders",
                       description="A - B per seed both have finished: mean ± std, 95 % "
                       "t-interval and wins. A and B are <benchmark out>/runs/<variant> folders, "
                       "e.g. two recipes' ln runs.")
    c.add_argument("a", help="variant folder of seed<k>/metrics.json")
    c.add_argument("b", help="the one it is compared against")
    c.add_argument("--split", default="test", choices=["val", "test"])
    c.add_argument("--json", help="also write the numbers to this file")
    c.add_argument("--suite", choices=["tdc-admet"], help="A and B are two selection suites' "
                   "--out folders (benchmark --suite tdc-admet, no --final): per task, the "
                   "cross-fitted validation score on tables under 2,000 rows, the plain one "
                   "above; better only beyond one seed standard deviation (needs --split val)")
    c.add_argument("--rule", default="spread", choices=["spread", "paired"], help="--suite: "
                   "'spread' calls a task tied within one seed standard deviation (rule B); "
                   "'paired' judges the per-seed differences by their 95 %% t-interval (rule G)")
    c.add_argument("--tasks", help="--suite: comma list of task names (default: all)")
    c.add_argument("--tdc-dir", dest="tdc_dir", help="--suite: the TDC ADMET group (default: "
                   "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
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

    from graphnorm.pretrain.cli import add_pretrain_args  # torch-free

    r = sub.add_parser("pretrain", help="multi-task pre-training on the ADMET corpus "
                       "(resumable)")
    add_pretrain_args(r)
    r.set_defaults(func=cmd_pretrain)
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
