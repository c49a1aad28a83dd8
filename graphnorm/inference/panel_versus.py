"""``graphnorm panel versus``: the molecules, both sides' predictions, the table, its picture
and the ledger row (the statistics are `versus`'s)."""
from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pandas as pd

from graphnorm.panel.plots import plot_versus
from graphnorm.panel.versus import ADMET_AI_SCRIPT, markdown, parse_matches, versus


def measured_molecules(paths, quantities) -> pd.DataFrame:
    """One row per SMILES of the tables at ``paths`` read as one (repeats averaged per
    quantity), in order of first appearance; a missing file or column named."""
    frames = []
    for path in map(Path, paths):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such measured table")
        frame = pd.read_csv(path)
        missing = [c for c in ("smiles", *quantities) if c not in frame.columns]
        if missing:
            raise ValueError(f"{path}: no column {missing} (it has {list(frame.columns)[:8]} ...)")
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    values = frame[list(quantities)].apply(pd.to_numeric, errors="coerce")
    return values.assign(smiles=frame["smiles"].astype(str)) \
        .groupby("smiles", sort=False).mean().reset_index()


def peer_predictions(args, molecules: pd.DataFrame, out: Path) -> pd.DataFrame:
    """The peer's predictions: the given CSV, or ADMET-AI run by ``--admet-ai-python``
    (cached in OUT/peer.csv for these molecules)."""
    if args.peer_predictions:
        return pd.read_csv(args.peer_predictions)
    inp, peer = out / "molecules.csv", out / "peer.csv"
    fresh = not inp.is_file() or pd.read_csv(inp)["smiles"].tolist() != molecules["smiles"].tolist()
    if fresh or not peer.is_file():
        molecules[["smiles"]].to_csv(inp, index=False)
        done = subprocess.run([args.admet_ai_python, "-c", ADMET_AI_SCRIPT, str(inp), str(peer)],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{args.admet_ai_python} could not run ADMET-AI "
                               f"(exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return pd.read_csv(peer)


def run_versus(args) -> int:
    from .admet_panel import AdmetPanel
    from graphnorm.panel.record import panel_file_sha256
    from graphnorm.pretrained import admet_panel_folder
    from graphnorm.provenance import git_sha

    matches = parse_matches(args.match)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    molecules = measured_molecules(args.measured, [m.quantity for m in matches])
    panel = AdmetPanel.load(args.model, all_endpoints=args.all)
    ours = panel.predict(molecules["smiles"].tolist())
    ours.to_csv(out / "ours.csv", index=False)
    rows = versus(molecules, ours, peer_predictions(args, molecules, out), matches)
    name = f"graphnorm admet ({args.model or 'shipped'})"
    table = markdown(rows, "graphnorm", "peer")
    (out / "versus.md").write_text(table)
    plot_versus(rows, out / "versus.png", "graphnorm", args.peer_name or "peer")
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    # what was scored, so that a model card can name it and check it is its own panel
    peer = args.peer_name or ("ADMET-AI" if args.admet_ai_python else args.peer_predictions)
    (out / "versus.json").write_text(json.dumps(
        {"panel": name, "panel_sha256": panel_file_sha256(args.model or admet_panel_folder()),
         "peer": peer,
         "measured": args.measured, "date_utc": stamp, "commit": git_sha(), "rows": rows},
        indent=1) + "\n")
    print(table)
    if args.ledger:
        ledger = Path(args.ledger)
        pd.DataFrame([{"date_utc": stamp, "commit": git_sha(), "panel": name,
                       "quantity": r["quantity"], "molecules": r["molecules"],
                       "graphnorm": r["ours"], "admet_ai": r["theirs"], "verdict": r["verdict"]}
                      for r in rows]).to_csv(ledger, mode="a", header=not ledger.exists(),
                                             index=False)
    return 0
