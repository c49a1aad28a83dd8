"""``graphnorm predict`` and ``graphnorm embed``: arguments and commands (cli.py wires them).

Rows are named as the user counts them in messages: ``line N`` of an input file (the header
is line 1), ``record N`` of an SDF, ``argument N`` of ``--smiles``.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

CHECKPOINT_HELP = ("a checkpoint file (best.ckpt), a run directory (its best.ckpt), or an "
                   "ensemble directory of `train --ensemble N` (model_<k>/best.ckpt: mean + std)")
INPUT_HELP = (".smi (SMILES [name] per line), .csv/.tsv (a 'smiles' column, or --smiles-column), "
              ".sdf, .parquet; other columns are kept in the output")


def add_predict_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True, nargs="+",
                   help=CHECKPOINT_HELP + "; several pool into one ensemble (e.g. runs/*/seed*)")
    p.add_argument("--smiles", nargs="+", help="SMILES on the command line")
    p.add_argument("--input", help=INPUT_HELP)
    p.add_argument("--smiles-column", dest="smiles_column",
                   help="the input's SMILES column (default: the column named 'smiles')")
    p.add_argument("--output", help="CSV: the input's columns, one column per target "
                   "('prediction' for one target), <target>_std for an ensemble, error "
                   "(default: stdout)")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--interval", type=float, metavar="LEVEL",
                   help="regression: add <target>_lo/<target>_hi, a split-conformal interval "
                   "that covers LEVEL (e.g. 0.9) of molecules like the validation ones, fitted "
                   "on the run's validation predictions")
    p.add_argument("--calibrate", choices=["platt", "isotonic"],
                   help="classification: probabilities recalibrated on the run's validation "
                   "predictions")


def add_embed_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True,
                   help="one checkpoint or run directory (an ensemble member, not the ensemble)")
    p.add_argument("--smiles", nargs="+", help="SMILES on the command line")
    p.add_argument("--input", help=INPUT_HELP)
    p.add_argument("--smiles-column", dest="smiles_column",
                   help="the input's SMILES column (default: the column named 'smiles')")
    p.add_argument("--output", required=True,
                   help=".npy (rows x dims, NaN rows = failed), .csv or .parquet (input columns, "
                   "error, vnode_0..)")
    p.add_argument("--atom-mean", dest="atom_mean", action="store_true",
                   help="append the mean final-norm atom token (atom_mean_0..)")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)


def _inputs(args):
    """[(table or None, smiles, row labels)] from --smiles and --input."""
    from graphnorm.inference.predict import read_input

    if not args.smiles and not args.input:
        raise ValueError("give --smiles S [S ...] or --input FILE")
    parts = []
    if args.smiles:
        parts.append((None, list(args.smiles), [f"argument {k + 1}" for k in range(len(args.smiles))]))
    if args.input:
        table = read_input(args.input, args.smiles_column)
        parts.append((table, table.smiles, table.labels))
    return parts


def _write_csv(df, output) -> None:
    """Via a temporary file: an interrupted write leaves no half-written output."""
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        df.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def run_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from graphnorm.inference.predict import ExtrapolationWarning, load_predictor

    parts = _inputs(args)
    predictor = load_predictor(args.checkpoint, batch_size=args.batch_size)
    frames, warned = [], {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExtrapolationWarning)
        for table, smiles, labels in parts:
            df = (predictor.predict_table(table, progress=True) if table is not None
                  else predictor.predict(smiles, labels, progress=True))
            warned.update({labels[i]: w for i, w in df.attrs["warnings"].items()})
            frames.append(df)
    for w in caught:  # one clean line each, not Python's file:line form
        print(f"graphnorm predict: warning: {w.message}", file=sys.stderr)
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if args.interval is not None:
        df = predictor.add_intervals(df, args.interval)
    if args.calibrate:
        df = predictor.calibrate(df, args.calibrate)
    failed = int((df.error != "").sum())
    if args.output:
        _write_csv(df, args.output)
        members = f" (mean of {len(predictor.members)} models)" if predictor.is_ensemble else ""
        print(f"[graphnorm] wrote {len(df)} rows{members} ({failed} failed, {len(warned)} with "
              f"warnings) to {args.output}")
    else:
        df.to_csv(sys.stdout, index=False)
    return 1 if failed == len(df) else 0


def report_failed_rows(command: str, labels, errors, shown: int = 10) -> list:
    """Print the first ``shown`` failed rows (label: message) on stderr, then a count of the
    rest; returns every (label, message) of a failed row."""
    bad = [(lab, e) for lab, e in zip(labels, errors) if e]
    for lab, e in bad[:shown]:
        print(f"graphnorm {command}: {lab}: {e}", file=sys.stderr)
    if len(bad) > shown:
        print(f"graphnorm {command}: and {len(bad) - shown} more failed rows", file=sys.stderr)
    return bad


def run_embed(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from graphnorm.inference.embed import embed_smiles, load_embedder, write_embeddings

    parts = _inputs(args)
    embedder = load_embedder(args.checkpoint, batch_size=args.batch_size)
    mats, errs, frames, labels = [], [], [], []
    for table, smiles, lab in parts:
        pre = None
        if table is not None:
            pre = [""] * len(table)
            for k, why in table.bad_rows.items():
                pre[k] = f"UnicodeDecodeError: {why}"
        m, e = embed_smiles(embedder, smiles, pre, atom_mean=args.atom_mean)
        mats.append(m)
        errs += e
        labels += lab
        frames.append(table.frame if table is not None else pd.DataFrame({"smiles": smiles}))
    matrix = np.concatenate(mats)
    inputs = pd.concat(frames, ignore_index=True).fillna("")
    write_embeddings(args.output, matrix, errs, inputs, args.atom_mean)
    bad = report_failed_rows("embed", labels, errs)
    print(f"[graphnorm] wrote {matrix.shape[0]} x {matrix.shape[1]} embeddings ({len(bad)} "
          f"failed{', NaN rows' if bad and args.output.endswith('.npy') else ''}) to {args.output}")
    return 1 if len(bad) == len(errs) else 0
