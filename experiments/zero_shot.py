"""The zero-shot yardstick (experiments/results/zero_shot/RULE.md): the shipped panel and
ADMET-AI on molecules neither was trained on, Spearman per measured quantity.

    python experiments/zero_shot.py --admet-ai-python /path/to/venv/bin/python \
        --work W --out experiments/results/zero_shot

ADMET-AI runs in its own virtualenv (``pip install torch==2.13.0 admet-ai==2.0.1`` there),
through ``--admet-ai-python``; graphnorm never imports it. Predictions are cached in W.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", ROOT.parent / "shared" / "datasets"))
# ASAP quantity -> (graphnorm panel column, ADMET-AI column): fixed in RULE.md before any run
MATCH = {"LogD": ("pharmabench/logd_reg", "Lipophilicity_AstraZeneca"),
         "KSOL_uM": ("pharmabench/water_sol_reg", "Solubility_AqSolDB"),
         "HLM_CLint": ("adme_mtft/clint", "Clearance_Microsome_AZ"),
         "MLM_CLint": ("pharmabench/mou_mic_cl_reg", "Clearance_Microsome_AZ"),
         "MDR1_MDCKII_Papp": ("adme_mtft/papp_caco2", "Caco2_Wang")}
RESAMPLES, SEED = 1000, 0
ADMET_AI = """
import sys, pandas as pd
from admet_ai import ADMETModel
smiles = pd.read_csv(sys.argv[1])["smiles"].tolist()
ADMETModel(num_workers=0).predict(smiles=smiles).to_csv(sys.argv[2])
"""


def molecules() -> pd.DataFrame:
    parts = [pd.read_csv(RAW / "asap_admet" / f) for f in ("train.csv", "test.csv")]
    frame = pd.concat(parts, ignore_index=True)
    return frame.groupby("smiles", sort=False)[list(MATCH)].mean().reset_index()


def predictions(work: Path, mols: pd.DataFrame, admet_ai_python: str) -> tuple:
    work.mkdir(parents=True, exist_ok=True)
    inp = work / "molecules.csv"
    mols[["smiles"]].to_csv(inp, index=False)
    ours, theirs = work / "graphnorm_panel.csv", work / "admet_ai.csv"
    if not ours.exists():
        subprocess.run([str(Path(sys.executable).parent / "graphnorm"), "admet", "--input",
                        str(inp), "--output", str(ours)], check=True)
    if not theirs.exists():
        subprocess.run([admet_ai_python, "-c", ADMET_AI, str(inp), str(theirs)], check=True)
    return pd.read_csv(ours), pd.read_csv(theirs)


def _spearman_rows(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Spearman of each row of y, p [B, n] (ranks per row, then Pearson)."""
    from scipy.stats import rankdata

    ry, rp = rankdata(y, axis=1), rankdata(p, axis=1)
    ry -= ry.mean(1, keepdims=True)
    rp -= rp.mean(1, keepdims=True)
    return (ry * rp).sum(1) / np.sqrt((ry ** 2).sum(1) * (rp ** 2).sum(1))


def compare(mols, ours, theirs) -> list[dict]:
    rng = np.random.default_rng(SEED)
    rows = []
    for quantity, (g_col, a_col) in MATCH.items():
        y = mols[quantity].to_numpy(float)
        g, a = ours[g_col].to_numpy(float), theirs[a_col].to_numpy(float)
        have = np.isfinite(y) & np.isfinite(g) & np.isfinite(a)
        y, g, a = y[have], g[have], a[have]
        idx = rng.integers(0, len(y), (RESAMPLES, len(y)))
        d = _spearman_rows(y[idx], g[idx]) - _spearman_rows(y[idx], a[idx])
        lo, hi = np.quantile(d, [0.025, 0.975])
        rho_g, rho_a = (float(_spearman_rows(y[None], x[None])[0]) for x in (g, a))
        rows.append({"quantity": quantity, "molecules": int(have.sum()), "graphnorm_column": g_col,
                     "graphnorm": rho_g, "admet_ai_column": a_col, "admet_ai": rho_a,
                     "d_low": float(lo), "d_high": float(hi),
                     "verdict": "better" if lo > 0 else "worse" if hi < 0 else "tied"})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| ASAP quantity (molecules) | graphnorm column | ρ graphnorm | ADMET-AI column | "
             "ρ ADMET-AI | graphnorm − ADMET-AI, 95 % | graphnorm is |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['quantity']} ({r['molecules']}) | {r['graphnorm_column']} | "
                     f"{r['graphnorm']:.3f} | {r['admet_ai_column']} | {r['admet_ai']:.3f} | "
                     f"[{r['d_low']:+.3f}, {r['d_high']:+.3f}] | {r['verdict']} |")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("better", "tied", "worse")}
    lines += ["", f"graphnorm better on {counts['better']}, tied on {counts['tied']}, worse on "
              f"{counts['worse']} of {len(rows)}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--admet-ai-python", required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    mols = molecules()
    ours, theirs = predictions(args.work, mols, args.admet_ai_python)
    rows = compare(mols, ours, theirs)
    print(markdown(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    ledger = args.out / "ledger.csv"
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    pd.DataFrame([{"date_utc": stamp, "commit": commit, "panel": "graphnorm admet (shipped)",
                   **{k: r[k] for k in ("quantity", "molecules", "graphnorm", "admet_ai",
                                        "verdict")}} for r in rows]) \
        .to_csv(ledger, mode="a", header=not ledger.exists(), index=False)


if __name__ == "__main__":
    main()
