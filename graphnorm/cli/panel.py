"""``graphnorm panel ensemble | build | readouts | related | blend | refit | versus-gbm | compare |
reference | card | ship | versus``: the ADMET panel of a trained pre-training run, one command
per step, each with its own flags.

    graphnorm panel ensemble OUT RUN RUN...   # one recipe's runs (by seed), averaged, in OUT
    graphnorm panel build RUN          # panel.json: which endpoints hold up on held-out scaffolds
    graphnorm panel readouts RUN       # one-table boosters where they beat the head
    graphnorm panel related RUN        # a species' column read through another's, where better
    graphnorm panel blend RUN          # head and booster, half each, where S allows
    graphnorm panel refit RUN REFIT    # carry RUN's panel to REFIT (same recipe, every row)
    graphnorm panel versus-gbm RUN     # each judged endpoint against one gbm per table
    graphnorm panel compare REF RUN... --out DIR   # backbones endpoint by endpoint
    graphnorm panel reference RUN      # percentiles among approved drugs (admet's *_percentile)
    graphnorm panel card RUN           # MODEL_CARD.md from the run's records
    graphnorm panel ship RUN           # install it as the panel graphnorm ships
    graphnorm panel versus MEASURED.csv --match asap-admet-ai --admet-ai-python PY --out DIR
                                       # Spearman per quantity against a peer (ADMET-AI)

The work is graphnorm/panel/'s (networks.py, build.py, readouts.py and hybrid.py, related.py,
blend.py, refit.py, versus_gbm.py, compare.py, reference.py, card.py and rebuild.py, ship.py,
versus.py; the file format: record.py, boosters.py), on a run that graphnorm/pretrain/ trained.
"""
from __future__ import annotations

import argparse
from pathlib import Path

STEPS = ("ensemble", "build", "readouts", "related", "blend", "refit", "versus-gbm", "compare",
         "reference", "card", "ship", "versus")


def _data_flags(p: argparse.ArgumentParser) -> None:
    """What rebuilding a run's data takes (its spec comes from RUN/pretrain.json)."""
    p.add_argument("--raw-dir", help="folder holding admet_corpus/ (default: $GRAPHNORM_RAW_DIR)")
    p.add_argument("--tdc-dir", help="the TDC ADMET group the run left out (default: "
                   "$GRAPHNORM_RAW_DIR/tdc_admet_group)")
    p.add_argument("--workers", type=int, default=1, help="featurizing processes")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def add_parser(sub) -> argparse.ArgumentParser:
    m = sub.add_parser("panel", help="build, judge, describe and ship the ADMET panel of a "
                       "pre-training run")
    steps = m.add_subparsers(dest="step", required=True, metavar="{" + ",".join(STEPS) + "}")
    e = steps.add_parser("ensemble", help="put the best.ckpt of one recipe's runs (the same "
                         "pretrain.json but for --seed) into OUT, a run folder whose networks "
                         "are averaged; then build its panel (panel build OUT)")
    e.add_argument("out", metavar="OUT")
    e.add_argument("runs", nargs="+", metavar="RUN", help="the runs, the first's records kept")
    e.add_argument("--half", action="store_true", help="store each member's weights in "
                   "float16 (half the bytes, so several fit the wheel; computing stays float32 "
                   "and the panel is built on what is stored)")
    b = steps.add_parser("build", help="score the run's best.ckpt per endpoint on its "
                         "held-out molecules: RUN/panel.json (the rule: graphnorm/panel/build.py)")
    b.add_argument("run", metavar="RUN")
    _data_flags(b)
    r = steps.add_parser("readouts", help="fit a one-table booster (Morgan counts + the head's "
                         "descriptors) per judged endpoint; it replaces the head where the "
                         "selection half says it is better; resumable; rewrites "
                         "RUN/panel.json")
    r.add_argument("run", metavar="RUN")
    r.add_argument("--backbone", action="store_true", help="then a second booster that also "
                   "reads the network's embedding and outputs, set against that panel")
    r.add_argument("--threads", type=int, default=1)
    _data_flags(r)
    q = steps.add_parser("related", help="read a quantity column through a related one (the "
                         "same measurement in another species: a + b x its value, fitted on "
                         "training labels) where the selection half says it is better; after "
                         "readouts; rewrites RUN/panel.json, rows in RUN/related.jsonl")
    q.add_argument("run", metavar="RUN")
    _data_flags(q)
    b = steps.add_parser("blend", help="predict quantity columns, and the columns a "
                         "one-table booster predicts, by the mean of the head and a booster: "
                         "a quantity column keeps it unless the selection half says it is "
                         "worse, a booster column where it scores at least as high there; "
                         "after readouts and related; rewrites RUN/panel.json and its "
                         "bundle, rows in RUN/blend.jsonl")
    b.add_argument("run", metavar="RUN")
    b.add_argument("--quantities", default=None, metavar="Q,Q,...", help="the quantity "
                   "columns to blend, a booster fitted where the head predicts them "
                   "(default: logd74, solubility, clint_microsomal_human, papp_caco2, where "
                   "the leave-source-out yardstick measured it)")
    b.add_argument("--threads", type=int, default=1)
    _data_flags(b)
    f = steps.add_parser("refit", help="carry a held-out build's panel (its choices, scores, "
                         "intervals) to REFIT, the same recipe trained on every row (pretrain "
                         "--val-percent 0): its boosters and far-from-training yardstick are "
                         "fitted again on every row; writes REFIT/panel.json")
    f.add_argument("run", metavar="RUN", help="the held-out build, its panel built")
    f.add_argument("refit", metavar="REFIT", help="the run trained on every row")
    f.add_argument("--threads", type=int, default=1)
    _data_flags(f)
    v = steps.add_parser("versus-gbm", help="each judged endpoint against one --model gbm "
                         "(MapLight features, that endpoint's training molecules alone); "
                         "resumable; RUN/versus_gbm.jsonl, .md and .png")
    v.add_argument("run", metavar="RUN")
    v.add_argument("--endpoints", type=int, help="the first N judged endpoints only (a dry run)")
    v.add_argument("--threads", type=int, default=1)
    _data_flags(v)
    c = steps.add_parser("compare", help="score these runs' networks endpoint by endpoint on "
                         "the held-out halves against the first (its splits, its panel's "
                         "endpoints; paired bootstrap): compare.md and compare.jsonl")
    c.add_argument("runs", nargs="+", metavar="RUN")
    c.add_argument("--out", required=True, help="where compare.md and compare.jsonl go")
    c.add_argument("--raw-dir", help="folder holding admet_corpus/ (default: $GRAPHNORM_RAW_DIR)")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    d = steps.add_parser("card", help="RUN/MODEL_CARD.md from the run's records and panel")
    d.add_argument("run", metavar="RUN")
    d.add_argument("--raw-dir", help="folder holding admet_corpus/ (its corpora's licences)")
    d.add_argument("--zero-shot", nargs="+", default=(), metavar="VERSUS_JSON",
                   help="versus.json files of `panel versus --model RUN`: the card shows how "
                   "this panel ranked molecules no training source measured, beside the peer")
    s = steps.add_parser("ship", help="install the run's best.ckpt, panel.json, boosters and "
                         "MODEL_CARD.md as the panel graphnorm ships (they must belong together)")
    s.add_argument("run", metavar="RUN")
    s.add_argument("--to", metavar="FOLDER", help="install there instead of "
                   "graphnorm/pretrained/admet (read it with graphnorm admet --model FOLDER)")
    _reference_parser(steps)
    _versus_parser(steps)
    m.set_defaults(func=run)
    return m


def _versus_parser(steps) -> None:
    w = steps.add_parser("versus", help="a panel against a peer's (ADMET-AI) on molecules with "
                         "measured values: Spearman per quantity, paired bootstrap verdict; "
                         "versus.md, its picture versus.png and versus.json in --out "
                         "(graphnorm/panel/versus.py)")
    w.add_argument("measured", metavar="MEASURED.csv", nargs="+", help="tables with a smiles "
                   "column and one column per measured quantity, read as one (rows repeating "
                   "a SMILES are averaged)")
    w.add_argument("--match", required=True, help="which columns predict each quantity: "
                   "QUANTITY=OURS:THEIRS,... or a preset (asap-admet-ai: the zero-shot table for "
                   "../shared/datasets/asap_admet against ADMET-AI 2.0.1)")
    peer = w.add_mutually_exclusive_group(required=True)
    peer.add_argument("--peer-predictions", metavar="CSV", help="the peer's predictions, one "
                      "row per molecule of MEASURED in order of first appearance")
    peer.add_argument("--admet-ai-python", metavar="PYTHON", help="the python of a virtualenv "
                      "with admet-ai installed (pip install torch==2.13.0 admet-ai==2.0.1): it "
                      "predicts the molecules there; never imported by graphnorm")
    w.add_argument("--peer-name", help="what the peer is, as versus.json and a model card "
                   "name it (default: ADMET-AI, or the --peer-predictions file)")
    w.add_argument("--model", help="the panel folder (default: the panel graphnorm ships)")
    w.add_argument("--all", action="store_true", help="match endpoints the panel does not show")
    w.add_argument("--out", required=True, help="where versus.md, versus.png, versus.json "
                   "and the predictions go")
    w.add_argument("--ledger", metavar="CSV", help="append one row per quantity to this ledger")
    w.add_argument("--threads", type=int, default=1)


def _reference_parser(steps) -> None:
    f = steps.add_parser("reference", help="predict a reference set of molecules (default: the "
                         "FDA-approved drugs of the corpus's ClinTox table) and keep each shown "
                         "endpoint's percentiles in RUN/reference.json: graphnorm admet then "
                         "adds <endpoint>_percentile, where a value stands among them "
                         "(graphnorm/panel/reference.py)")
    f.add_argument("run", metavar="RUN", help="the panel folder (after build, readouts, "
                   "related and blend: a panel rebuilt later makes it stale)")
    f.add_argument("--molecules", metavar="FILE", help="the reference molecules instead: "
                   ".smi, .csv/.tsv (a 'smiles' column, or --smiles-column), .sdf, .parquet")
    f.add_argument("--smiles-column", help="the SMILES column of --molecules")
    f.add_argument("--name", help="what the molecules are, as --list and the card say it")
    f.add_argument("--raw-dir", help="folder holding admet_corpus/ (default: $GRAPHNORM_RAW_DIR)")
    f.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(max(1, getattr(args, "threads", 1)))
    if args.step == "reference":
        from graphnorm.inference.panel_reference import run_reference

        return run_reference(args)
    if args.step == "versus":
        from graphnorm.inference.panel_versus import run_versus

        return run_versus(args)
    if args.step == "compare":
        from graphnorm.panel.compare import write_comparison

        if len(args.runs) < 2:
            raise ValueError("panel compare needs a reference run and at least one other")
        path = write_comparison([Path(r) for r in args.runs], Path(args.out), args.raw_dir,
                                not args.quiet)
        print(f"[graphnorm panel] wrote {path}")
        return 0
    if args.step == "ensemble":
        from graphnorm.panel.networks import assemble, member_files

        out = assemble(Path(args.out), [Path(r) for r in args.runs], half=args.half)
        print(f"[graphnorm panel] {out}: the mean of {len(member_files(out))} networks; build "
              f"its panel next (graphnorm panel build {out})")
        return 0
    folder = Path(args.run)
    if args.step == "card":
        from graphnorm.panel.card import write_model_card

        print(f"[graphnorm panel] wrote {write_model_card(folder, args.raw_dir, args.zero_shot)}")
        return 0
    if args.step == "ship":
        from graphnorm.panel.ship import ship

        print(f"[graphnorm panel] shipped {folder} -> {ship(folder, args.to)}")
        return 0
    from graphnorm.pretrain.cli import open_run

    progress = not args.quiet
    if args.step == "refit":
        return _refit(args, folder, progress)
    run_ = open_run(folder, args.raw_dir, args.tdc_dir, max(1, args.workers), progress)
    if args.step == "build":
        return _build(run_, folder, args.raw_dir)
    if args.step == "related":
        from graphnorm.panel.related import related_panel

        panel = related_panel(run_, folder, progress)
        read = [e.task for e in panel.endpoints if e.by_related]
        print(f"[graphnorm panel] {folder / 'panel.json'}: {len(read)} columns read through a "
              f"related one{': ' + ', '.join(read) if read else ''}; {panel.shown} shown")
        return 0
    if args.step == "blend":
        from graphnorm.panel.blend import QUANTITIES, blend_panel

        names = args.quantities.split(",") if args.quantities else QUANTITIES
        panel = blend_panel(run_, folder, names, max(1, args.threads), progress)
        blends = [e.task for e in panel.endpoints if e.by_blend]
        print(f"[graphnorm panel] {folder / 'panel.json'}: {len(blends)} columns blended"
              f"{': ' + ', '.join(blends) if blends else ''} (rows: {folder / 'blend.jsonl'}); "
              f"{panel.shown} shown")
        return 0
    if args.step == "versus-gbm":
        from graphnorm.panel.versus_gbm import versus_gbm

        path = versus_gbm(run_, folder, args.raw_dir, args.endpoints, max(1, args.threads),
                          max(1, args.workers), progress=progress)
        print(path.read_text())
        return 0
    from graphnorm.panel.hybrid import write_readout_panel

    print(write_readout_panel(run_, folder, max(1, args.threads), progress,
                              backbone=args.backbone).read_text())
    return 0


def _build(run_, folder: Path, raw_dir) -> int:
    from graphnorm.panel.build import build_panel

    panel = build_panel(run_, folder, raw_dir)
    path = panel.write(folder)
    judged = sum(e.judged for e in panel.endpoints)
    print(f"[graphnorm panel] {panel.shown} of {len(panel.endpoints)} endpoints hold up on "
          f"held-out molecules ({judged} had enough labels to be judged) -> {path}")
    return 0


def _refit(args, held: Path, progress: bool) -> int:
    from graphnorm.panel.refit import refit_panel
    from graphnorm.pretrain.cli import open_run

    refit = Path(args.refit)
    run_ = open_run(refit, args.raw_dir, args.tdc_dir, max(1, args.workers), progress)
    panel = refit_panel(held, run_, refit, max(1, args.threads), progress)
    print(f"[graphnorm panel] {refit / 'panel.json'}: {panel.shown} endpoints carried from "
          f"{held} (scores measured there, on held-out molecules); "
          f"{len(panel.booster_tasks())} boosters refitted on every row")
    return 0
