"""``graphnorm admet --explain ENDPOINT --drawings DIR``: the atom attributions of one panel
endpoint (`panel_attributions.explain_endpoint`), with ``graphnorm explain``'s method flags (cli.py wires them
beside ``graphnorm admet``'s own; torch loads on run only).

Writes into ``--drawings``: ``attributions.csv`` (row, smiles, atom_index, element, endpoint,
score) and one SVG per molecule (``mol_0001.svg``: the input's position over --smiles, then
--input), its legend the value or probability the panel shows.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .cli import DEFAULT_METHOD, METHOD_CHOICES


def add_admet_explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--explain", metavar="ENDPOINT", help="atom attributions of this shown "
                   "endpoint (a name of --list) instead of the predictions: one SVG per "
                   "molecule and attributions.csv, into --drawings. Regression scores are "
                   "changes of the value in the endpoint's units, binary ones of the "
                   "calibrated log-odds; an endpoint a one-table booster predicts is "
                   "explained by TreeSHAP over its Morgan substructures, whatever --method")
    p.add_argument("--drawings", metavar="DIR", help="--explain's output folder (created)")
    p.add_argument("--method", choices=METHOD_CHOICES, default=DEFAULT_METHOD,
                   help="--explain's attribution method, as `graphnorm explain --method`")
    p.add_argument("--steps", type=int, default=32, help="integrated-gradient steps")
    p.add_argument("--max-drawings", dest="max_drawings", type=int, default=1000,
                   help="--explain: SVG files for the first N molecules only (0: none)")


def run_admet_explain(args: argparse.Namespace) -> int:
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.inference.cli import report_failed_rows

    from .cli import _inputs
    from .draw import draw_attributions, file_stem
    from .panel_attributions import explain_endpoint

    if not args.drawings:
        raise ValueError("--explain writes files: give the folder, --drawings DIR")
    if args.output:
        raise ValueError("--explain writes into --drawings, not --output; run without "
                         "--explain for the predictions")
    panel = AdmetPanel.load(args.model, all_endpoints=args.all, batch_size=args.batch_size)
    panel.endpoint_position(args.explain)  # an endpoint it does not show: refused before work
    smiles, labels, errors = _inputs(args)
    got = explain_endpoint(panel, smiles, args.explain, args.method, args.steps, errors, labels)
    values = panel.predict(smiles, errors)[args.explain]
    out = Path(args.drawings)
    out.mkdir(parents=True, exist_ok=True)
    got.atoms.to_csv(out / "attributions.csv", index=False)
    drawn = 0
    for k, scores in enumerate(got.scores):
        if scores is None or drawn >= args.max_drawings:
            continue
        legend = f"{labels[k]}: {args.explain} {values[k]:.3g}"
        svg = draw_attributions(got.smiles[k], scores, "svg", legend=legend)
        (out / f"{file_stem(k, args.explain, False)}.svg").write_text(svg)
        drawn += 1
    bad = report_failed_rows("admet", labels, got.errors)
    print(f"[graphnorm] {got.method} attributions of {args.explain} ({got.meaning}) for "
          f"{len(smiles) - len(bad)} of {len(smiles)} molecules ({drawn} drawn) -> {out}")
    return 1 if len(bad) == len(smiles) else 0
