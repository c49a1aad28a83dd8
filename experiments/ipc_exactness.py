"""How many TDC ADMET molecules get another ``AvgIpc`` from RDKit's float characteristic
polynomial than from the exact one (`graphnorm.chem.descriptor_values._char_poly_abs`).

RDKit's ``Graphs.CharacteristicPolynomial`` runs Le Verrier-Faddeev in floats with BLAS
products, so past 2^53 its result follows the host's OpenBLAS kernel (named in the output).
Compared in float32, the precision of the MapLight vectors; molecules below 30 atoms are
exact in floats and skipped.

    GRAPHNORM_RAW_DIR=../shared/datasets python experiments/ipc_exactness.py \\
        --out experiments/results/tdc_admet/ipc_exact/counts.md
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def kernel() -> str:
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    return f"OpenBLAS {blas[0].get('version')} {blas[0].get('architecture')}" if blas else "?"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from rdkit import Chem, rdBase
    from rdkit.Chem import Graphs
    from rdkit.ML.InfoTheory import entropy

    from graphnorm.chem.descriptor_values import _char_poly_abs
    from graphnorm.data.tdc import TDC_ADMET_TASKS, admet_group_dir, task_table
    from graphnorm.provenance import code_sha, cpu_model

    group, rows = admet_group_dir(), []
    with rdBase.BlockLogs():
        for task in TDC_ADMET_TASKS:
            smiles = pd.read_csv(task_table(task, group))["Drug"].astype(str).unique()
            large = differ = 0
            worst = 0.0
            for s in smiles:
                mol = Chem.MolFromSmiles(s)
                if mol is None or mol.GetNumAtoms() < 30:
                    continue
                large += 1
                adjacency = np.equal(Chem.GetDistanceMatrix(mol, False), 1)
                exact = np.float32(entropy.InfoEntropy(_char_poly_abs(adjacency)))
                floats = np.float32(entropy.InfoEntropy(
                    np.abs(Graphs.CharacteristicPolynomial(mol, adjacency))))
                if exact != floats:
                    differ += 1
                    worst = max(worst, abs(float(exact) - float(floats)))
            rows.append({"task": task, "molecules": len(smiles), "30+ atoms": large,
                         "AvgIpc differs": differ, "largest difference": round(worst, 3)})
    table = pd.DataFrame(rows)
    total = table.sum(numeric_only=True)
    lines = [f"# AvgIpc: RDKit's float polynomial against the exact one, TDC ADMET molecules",
             "", f"code {code_sha()}, {cpu_model()}, {kernel()}; command: `GRAPHNORM_RAW_DIR="
             f"../shared/datasets python experiments/ipc_exactness.py --out {args.out}`", "",
             "| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in table.itertuples(index=False)]
    lines += ["", f"{int(total['AvgIpc differs'])} of {int(total['molecules']):,} molecules differ, "
              f"on {int((table['AvgIpc differs'] > 0).sum())} of {len(table)} tasks."]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
