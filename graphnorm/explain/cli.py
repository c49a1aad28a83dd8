"""``graphnorm explain``: arguments and command (cli.py wires them; torch loads on run only).

Writes into ``--out``: ``attributions.csv`` (row, smiles, atom_index, element, target, score,
std), ``molecules.csv`` (one row per input: predictions, error, drawing), one SVG and one PNG
per molecule and target (``mol_0001.svg``; ``mol_0001_<target>.svg`` for several targets),
``grid.png`` (the first ``--grid-max`` molecules; ``grid_<target>.png`` for several targets)
and ``explain.json`` (method, checkpoints, what the scores mean).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from graphnorm.inference.cli import CHECKPOINT_HELP, INPUT_HELP

METHOD_CHOICES = ("ig", "occlusion", "rollout")  # graphnorm.explain.methods.METHODS, torch-free
DEFAULT_METHOD = "occlusion"  # = methods.DEFAULT_METHOD (tested): the faithfulness winner
SCORE_MEANING = {
    "ig": "integrated gradients: atom's share of F(molecule) - F(same graph, atoms of no "
          "element); the scores of a molecule sum to that difference",
    "occlusion": "F(molecule) - F(molecule with this atom's element blanked): how much the "
                 "prediction drops when the model no longer sees the atom's type",
    "rollout": "attention rollout from the readout token: share of attention flow, >= 0, "
               "the same for every target, no sign",
}


def add_explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True, nargs="+",
                   help=CHECKPOINT_HELP + "; an ensemble's scores are the members' mean, std "
                   "their spread")
    p.add_argument("--smiles", nargs="+", help="SMILES on the command line")
    p.add_argument("--input", help=INPUT_HELP)
    p.add_argument("--smiles-column", dest="smiles_column",
                   help="the input's SMILES column (default: the column named 'smiles')")
    p.add_argument("--out", required=True, help="output folder (created)")
    p.add_argument("--method", choices=METHOD_CHOICES, default=DEFAULT_METHOD,
                   help="occlusion: blank one atom's element at a time; ig: integrated "
                   "gradients from blank atoms; rollout: [VNode] attention rollout "
                   "(Graphormer only). Default: the most faithful in "
                   "experiments/results/explain")
    p.add_argument("--steps", type=int, default=32, help="integrated-gradient steps")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    p.add_argument("--max-drawings", dest="max_drawings", type=int, default=1000,
                   help="SVG + PNG files for the first N molecules only (0: none)")
    p.add_argument("--grid-max", dest="grid_max", type=int, default=48,
                   help="molecules in grid.png")


def _inputs(args):
    """(smiles, labels, pre-set errors) of --smiles and --input, in that order."""
    from graphnorm.inference.cli import _inputs as predict_inputs

    smiles, labels, errors = [], [], []
    for table, s, lab in predict_inputs(args):
        pre = [""] * len(s)
        if table is not None:
            for k, why in table.bad_rows.items():
                pre[k] = f"UnicodeDecodeError: {why}" if "UTF-8" in why else why
        smiles += s
        labels += lab
        errors += pre
    return smiles, labels, errors


def write_drawings(ex, out: Path, max_drawings: int, grid_max: int) -> list[str]:
    """SVG + PNG per molecule and target, and the grid(s); the drawing name of each row."""
    from .draw import draw_attributions, file_stem, grid_png, safe_name

    several = len(ex.targets) > 1
    cols = ex.molecules.columns
    names = [""] * len(ex.molecules)
    for t, target in enumerate(ex.targets):
        grid = []
        for k, row in enumerate(sorted(ex.scores)):
            if k >= max(max_drawings, grid_max):
                break
            smiles, label = ex.molecules.smiles[row], ex.molecules.row[row]
            scores = ex.scores[row][:, t]
            pred_col = cols[2 + t]  # row, smiles, then one prediction column per target
            legend = f"{label}: {target} {ex.molecules[pred_col][row]:.3g}"
            if k < max_drawings:
                stem = file_stem(row, target, several)
                (out / f"{stem}.svg").write_text(draw_attributions(smiles, scores, "svg", legend=legend))
                (out / f"{stem}.png").write_bytes(draw_attributions(smiles, scores, "png", legend=legend))
                if t == 0:
                    names[row] = f"{stem}.svg"
            if k < grid_max:
                grid.append((smiles, scores, legend))
        png = grid_png(grid)
        if png is not None:
            (out / (f"grid_{safe_name(target)}.png" if several else "grid.png")).write_bytes(png)
    return names


def run_explain(args: argparse.Namespace) -> int:
    from graphnorm.explain.explainer import load_explainer
    from graphnorm.tasks import resolve_task

    smiles, labels, errors = _inputs(args)
    explainer = load_explainer(args.checkpoint, method=args.method, steps=args.steps,
                               batch_size=args.batch_size)
    ex = explainer.explain(smiles, labels, errors, progress=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ex.atoms.to_csv(out / "attributions.csv", index=False)
    molecules = ex.molecules.copy()
    molecules["drawing"] = write_drawings(ex, out, args.max_drawings, args.grid_max)
    molecules.to_csv(out / "molecules.csv", index=False)
    members, scored = explainer.predictor.members, explainer.graph_members
    if explainer.note:
        print(f"[graphnorm] {explainer.note}", flush=True)
    meta = {"method": args.method, "steps": args.steps if args.method == "ig" else None,
            "checkpoints": [str(m.path) for m in members],
            "attributed": [str(m.path) for m in scored], "note": explainer.note or None,
            "targets": ex.targets,
            "score": SCORE_MEANING[args.method],
            "units": ("logit (log-odds) of the positive class"
                      if resolve_task(members[0].task).binary else "target units"),
            "std": "population std of the members' scores" if len(scored) > 1 else None,
            "rows": len(smiles), "failed": int((ex.molecules.error != "").sum())}
    (out / "explain.json").write_text(json.dumps(meta, indent=2) + "\n")
    from graphnorm.inference.cli import report_failed_rows

    bad = report_failed_rows("explain", ex.molecules.row, ex.molecules.error)
    print(f"[graphnorm] {args.method} attributions of {len(smiles) - len(bad)} molecules "
          f"({len(bad)} failed, {len(members)} model{'s' if len(members) > 1 else ''}) -> {out}")
    return 1 if len(bad) == len(smiles) else 0
