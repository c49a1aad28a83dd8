"""A panel against a peer's on molecules with measured values: Spearman per quantity, side by
side, with a paired bootstrap verdict (``graphnorm panel versus``; the zero-shot yardstick of
experiments/results/zero_shot/).

For each measured quantity, a *match* names the panel's column and the peer's column that
predict it (fixed before any score is read: a column chosen by its score would flatter
either side). The molecules are those measured for the quantity where both columns have a
prediction. The verdict: *better* / *worse* when the 95 % interval of the paired bootstrap of
rho(panel) - rho(peer) over the molecules lies above / below 0, else *tied*
(`bootstrap.paired_interval` with ``spearman``).

The peer runs elsewhere: ADMET-AI in its own virtualenv (`ADMET_AI_SCRIPT`), never imported
here; its predictions arrive as a CSV with one row per input molecule, in order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from graphnorm.stats.bootstrap import BOOTSTRAP, SEED, paired_interval, score, verdict


@dataclass(frozen=True)
class Match:
    quantity: str  # the measured table's column
    ours: str  # the panel's column
    theirs: str  # the peer's column


# the public time split of ../shared/datasets/asap_admet against ADMET-AI 2.0.1: the yardstick's
# table (experiments/results/zero_shot/), fixed by quantity before any run
ASAP_ADMET_AI = (
    Match("LogD", "pharmabench/logd_reg", "Lipophilicity_AstraZeneca"),
    Match("KSOL_uM", "pharmabench/water_sol_reg", "Solubility_AqSolDB"),
    Match("HLM_CLint", "adme_mtft/clint", "Clearance_Microsome_AZ"),
    Match("MLM_CLint", "pharmabench/mou_mic_cl_reg", "Clearance_Microsome_AZ"),
    Match("MDR1_MDCKII_Papp", "adme_mtft/papp_caco2", "Caco2_Wang"),
)
# ... and a quantity panel (`pretrain --targets quantities`) by its quantity columns
# (MDCK Papp has no quantity of its own: Caco-2's, as ADMET-AI's Caco2_Wang)
ASAP_ADMET_AI_QUANTITIES = (
    Match("LogD", "quantity/logd74", "Lipophilicity_AstraZeneca"),
    Match("KSOL_uM", "quantity/solubility", "Solubility_AqSolDB"),
    Match("HLM_CLint", "quantity/clint_microsomal_human", "Clearance_Microsome_AZ"),
    Match("MLM_CLint", "quantity/clint_microsomal_mouse", "Clearance_Microsome_AZ"),
    Match("MDR1_MDCKII_Papp", "quantity/papp_caco2", "Caco2_Wang"),
)
PRESETS = {"asap-admet-ai": ASAP_ADMET_AI, "asap-admet-ai-quantities": ASAP_ADMET_AI_QUANTITIES}

# run by the peer's own python: argv[1] a CSV with a smiles column, argv[2] the output CSV
ADMET_AI_SCRIPT = """
import sys, pandas as pd
from admet_ai import ADMETModel
smiles = pd.read_csv(sys.argv[1])["smiles"].tolist()
ADMETModel(num_workers=0).predict(smiles=smiles).to_csv(sys.argv[2])
"""


def parse_matches(text: str) -> tuple:
    """A preset name (`PRESETS`) or "QUANTITY=OURS:THEIRS,..." -> Matches."""
    if text in PRESETS:
        return PRESETS[text]
    matches = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        quantity, _, columns = part.partition("=")
        ours, _, theirs = columns.partition(":")
        if not (quantity and ours and theirs):
            raise ValueError(f"--match {part!r}: expected QUANTITY=OURS:THEIRS (or a preset: "
                             f"{', '.join(PRESETS)})")
        matches.append(Match(quantity.strip(), ours.strip(), theirs.strip()))
    if not matches:
        raise ValueError("--match names no quantity")
    return tuple(matches)


def _column(frame: pd.DataFrame, name: str, what: str) -> np.ndarray:
    if name not in frame.columns:
        raise ValueError(f"{what} has no column {name!r} (it has {list(frame.columns)[:8]} ...)")
    return pd.to_numeric(frame[name], errors="coerce").to_numpy(float)


def versus(measured: pd.DataFrame, ours: pd.DataFrame, theirs: pd.DataFrame, matches,
           resamples: int = BOOTSTRAP, seed: int = SEED) -> list[dict]:
    """One row per match: molecules, each side's Spearman, the 95 % interval of the
    difference and the verdict. The three frames hold the same molecules in the same order."""
    if not len(measured) == len(ours) == len(theirs):
        raise ValueError(f"{len(measured)} measured molecules, {len(ours)} rows of the panel's "
                         f"predictions, {len(theirs)} of the peer's: one row per molecule each")
    rng = np.random.default_rng(seed)
    rows = []
    for m in matches:
        y = _column(measured, m.quantity, "the measured table")
        a, b = _column(ours, m.ours, "the panel's predictions"), _column(theirs, m.theirs,
                                                                         "the peer's predictions")
        have = np.isfinite(y) & np.isfinite(a) & np.isfinite(b)
        if have.sum() < 3:
            raise ValueError(f"{m.quantity}: {int(have.sum())} molecules with a value and both "
                             "predictions; too few to rank")
        lo, hi = paired_interval("spearman", y[have], a[have], b[have], rng, resamples)
        rows.append({"quantity": m.quantity, "molecules": int(have.sum()), "ours_column": m.ours,
                     "ours": score("spearman", y[have], a[have]), "theirs_column": m.theirs,
                     "theirs": score("spearman", y[have], b[have]), "d_low": lo, "d_high": hi,
                     "verdict": verdict(lo, hi)})
    return rows


def markdown(rows: list[dict], ours: str = "graphnorm", theirs: str = "peer") -> str:
    lines = [f"| quantity (molecules) | {ours} column | ρ {ours} | {theirs} column | ρ {theirs} | "
             f"{ours} − {theirs}, 95 % | {ours} is |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['quantity']} ({r['molecules']}) | {r['ours_column']} | "
                     f"{r['ours']:.3f} | {r['theirs_column']} | {r['theirs']:.3f} | "
                     f"[{r['d_low']:+.3f}, {r['d_high']:+.3f}] | {r['verdict']} |")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("better", "tied", "worse")}
    lines += ["", f"{ours} better on {counts['better']}, tied on {counts['tied']}, worse on "
              f"{counts['worse']} of {len(rows)}."]
    return "\n".join(lines) + "\n"
