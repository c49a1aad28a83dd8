"""``graphnorm predict`` and ``graphnorm embed``: arguments and commands (cli.py wires them).

Rows are named as the user counts them in messages: ``line N`` of an input file (the header
is line 1), ``record N`` of an SDF, ``argument N`` of ``--smiles``.
"""
from __future__ import annotations

import argparse
import sys
import warnings

CHECKPOINT_HELP = ("a checkpoint file (best.ckpt), a run directory (its best.ckpt), or an "
                   "ensemble directory of `train --ensemble N` (model_<k>/best.ckpt: mean + std)")
INPUT_HELP = (".smi (SMILES [name] per line), .csv/.tsv (a 'smiles' column, or --smiles-column), "
              ".sdf, .parquet; other columns are kept in the output")


def add_molecule_inputs(p: argparse.ArgumentParser) -> None:
    """--smiles, --input and --smiles-column: where a command reads its molecules."""
    p.add_argument("--smiles", nargs="+", help="SMILES on the command line")
    p.add_argument("--input", help=INPUT_HELP)
    p.add_argument("--smiles-column", dest="smiles_column",
                   help="the input's SMILES column (default: the column named 'smiles')")


def add_predict_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True, nargs="+",
                   help=CHECKPOINT_HELP + "; several pool into one ensemble (e.g. runs/*/seed*)")
    add_molecule_inputs(p)
    p.add_argument("--output", help="CSV: the input's columns, one column per target "
                   "('prediction' for one target), <target>_std for an ensemble, error "
                   "(default: stdout). Written as rows are predicted; if the run is "
                   "interrupted, the same command again keeps the rows written and "
                   "predicts the rest")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--jobs", type=int, default=1,
                   help="processes that featurize and predict chunks side by side (one "
                   "thread each); about one per free core")
    p.add_argument("--device", default="auto",
                   help="where the graph models run: auto (default: a GPU if PyTorch sees one "
                   "and --jobs is 1), cpu, cuda, cuda:N")
    p.add_argument("--chunk-rows", dest="chunk_rows", type=int, default=1000,
                   help="rows read, predicted and written at a time: memory grows with it, "
                   "not with the input's length")
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
    add_molecule_inputs(p)
    p.add_argument("--output", required=True,
                   help=".npy (rows x dims, NaN rows = failed), .csv or .parquet (input columns, "
                   "error, vnode_0..)")
    p.add_argument("--atom-mean", dest="atom_mean", action="store_true",
                   help="append the mean final-norm atom token (atom_mean_0..)")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)


def add_admet_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="a panel folder: best.ckpt and panel.json (`graphnorm "
                   "panel build RUN`); default: the panel shipped with graphnorm")
    add_molecule_inputs(p)
    p.add_argument("--output", help="CSV: per endpoint its value (units: --list) or "
                   "probability, <endpoint>_lo/_hi (90 %% interval, regression), "
                   "<endpoint>_percentile (where the value stands among approved drugs: --list "
                   "names them), domain_distance, far_from_training, warning (why a row is an "
                   "extrapolation), error (default: stdout)")
    p.add_argument("--list", action="store_true", help="print the endpoints, their units and "
                   "held-out scores, and stop")
    p.add_argument("--all", action="store_true", help="also the endpoints that did not hold "
                   "up on held-out molecules (their scores say how little to trust them)")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)


def run_admet(args: argparse.Namespace) -> int:
    import pandas as pd

    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load(args.model, all_endpoints=args.all, batch_size=args.batch_size)
    if args.list:
        print(panel.endpoints().to_string(index=False))
        if panel.reference is not None:
            ref = panel.reference
            print(f"\n<endpoint>_percentile: where a value stands among the panel's predictions "
                  f"for {ref.molecules} {ref.name}")
        return 0
    from graphnorm.inference.predict import extrapolation_message, row_errors

    frames, labels = [], []
    for table, smiles, rows in _inputs(args):
        labels += list(rows)
        errors = row_errors(table.bad_rows, len(smiles)) if table is not None else None
        frame = panel.predict(smiles, errors, progress=True)
        if table is not None:
            frame = pd.concat([table.frame.reset_index(drop=True).drop(
                columns=[c for c in table.frame.columns if c in frame.columns]), frame], axis=1)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    failed = int((out["error"] != "").sum())
    warned = [k for k, w in enumerate(out["warning"]) if w]
    if warned:  # the rows are predicted; the flag says how far to trust them
        shown = [(labels[k], out["smiles"][k], out["warning"][k]) for k in warned[:3]]
        print(f"graphnorm admet: warning: {extrapolation_message(shown, len(warned))} "
              "(the warning column)", file=sys.stderr)
    if args.output:
        out.to_csv(args.output, index=False)
        print(f"[graphnorm] wrote {len(out)} rows x {len(panel.entries)} endpoints ({failed} "
              f"failed) to {args.output}")
    else:
        out.to_csv(sys.stdout, index=False)
    return 1 if failed == len(out) else 0


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


def run_predict(args: argparse.Namespace) -> int:
    from graphnorm.inference.predict import load_predictor, resolve_device
    from graphnorm.inference.resumable_csv import ResumableCsv, file_identity
    from graphnorm.inference.stream import (ChunkWriter, SmilesList, StdoutCsv, predict_stream,
                                            source_identity)
    from graphnorm.inference.table_stream import TableStream

    if not args.smiles and not args.input:
        raise ValueError("give --smiles S [S ...] or --input FILE")
    if args.jobs < 1 or args.chunk_rows < 1:
        raise ValueError("--jobs and --chunk-rows take a positive number")
    sources = ([SmilesList(args.smiles)] if args.smiles else []) + (
        [TableStream(args.input, args.smiles_column)] if args.input else [])
    device = resolve_device(args.device, args.jobs)
    predictor = load_predictor(args.checkpoint, batch_size=args.batch_size, device=device)
    writer = ChunkWriter(predictor, sources, args.interval, args.calibrate)
    if args.output:
        # what the rows answer: a rerun resumes only an output of the same command
        identity = {"sources": [source_identity(s) for s in sources],
                    "checkpoints": [file_identity(m.path) for m in predictor.members],
                    "interval": args.interval, "calibrate": args.calibrate}
        sink = ResumableCsv(args.output, writer.columns, identity)
    else:
        sink = StdoutCsv(writer.columns)
    with warnings.catch_warnings():
        warnings.showwarning = _warn_once()
        try:
            summary = predict_stream(predictor, sources, writer, sink, jobs=args.jobs,
                                     chunk_rows=args.chunk_rows, progress=True)
        except KeyboardInterrupt:  # what was written stays; predict_stream said how to go on
            return 130
    if summary.warning:  # one clean line, not Python's file:line form
        print(f"graphnorm predict: warning: {summary.warning}", file=sys.stderr)
    if args.output:
        members = f" (mean of {len(predictor.members)} models)" if predictor.is_ensemble else ""
        resumed = f", {summary.resumed:,} of them kept from the interrupted run" if summary.resumed else ""
        print(f"[graphnorm] wrote {summary.rows} rows{members} ({summary.failed} failed, "
              f"{summary.warned} with warnings{resumed}) to {args.output}")
    return 1 if summary.failed == summary.rows else 0


def _warn_once():
    """Other libraries' warnings: one clean line per distinct message (a million rows must
    not print a million lines)."""
    seen: set = set()

    def show(message, category, filename, lineno, file=None, line=None):
        if str(message) not in seen:
            seen.add(str(message))
            print(f"graphnorm predict: warning: {message}", file=sys.stderr)

    return show


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
