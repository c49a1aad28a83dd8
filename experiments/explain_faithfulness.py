"""Are `graphnorm explain`'s atom scores faithful? Targets whose responsible atoms are known.

1. A table of the first N molecules of ZINC's JT-VAE test file (raw data dir) with two targets
   RDKit computes atom by atom, written to data/derived/ (gitignored):
   - ``crippen_logp``: Wildman-Crippen logP, a sum of per-atom contributions
     (``rdMolDescriptors._CalcCrippenContribs`` on the molecule with explicit hydrogens; each
     hydrogen's contribution is added to its heavy atom, so the heavy-atom contributions sum
     to the target exactly);
   - ``amide_count``: the number of amide groups ``[CX3](=O)[NX3]``; its responsible atoms
     are the matched C, O and N.
2. ``graphnorm train --data TABLE --target-columns crippen_logp amide_count --split random``
   for each model (one thread, a few CPU minutes).
3. On the run's test split, for each method of ``graphnorm explain``: per molecule the
   Spearman correlation of the atom scores (crippen_logp target) with the true contributions,
   and the ROC-AUC of the atom scores (amide_count target) for "atom is in an amide" over
   molecules that have one; mean, std and count over test molecules. References without a
   model: "element mean" (each atom scored by its element's mean contribution / amide rate on
   the training split) and "random" scores.
4. The ADMET panel's booster attributions on the same split and targets: a booster per target
   in rule J's config on Morgan counts + fast descriptors, TreeSHAP of its Morgan bits shared
   among each bit's atoms (graphnorm/explain/tree_atoms.py).

    python experiments/explain_faithfulness.py --raw-dir ../shared/datasets --rows 2000 \
        --models graphormer,gine --epochs 40 --out experiments/results/explain
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

AMIDE = "[CX3](=O)[NX3]"
TARGETS = ("crippen_logp", "amide_count")
METHODS = ("ig", "occlusion", "rollout")
PRESET = {"graphormer": "small", "gine": "tiny", "gin-vn": "tiny"}


def atom_truth(smiles: str) -> tuple[np.ndarray, np.ndarray]:
    """(Crippen logP contribution per heavy atom with its hydrogens', amide membership 0/1)."""
    from rdkit import Chem
    from rdkit.Chem import rdMolDescriptors

    mol = Chem.MolFromSmiles(smiles)
    with_h = Chem.AddHs(mol)
    contribs = [c[0] for c in rdMolDescriptors._CalcCrippenContribs(with_h)]
    heavy = np.zeros(mol.GetNumAtoms())
    for atom, c in zip(with_h.GetAtoms(), contribs):
        owner = atom.GetIdx() if atom.GetAtomicNum() != 1 else atom.GetNeighbors()[0].GetIdx()
        heavy[owner] += c  # AddHs appends hydrogens: heavy atoms keep their indices
    amide = np.zeros(mol.GetNumAtoms())
    for match in mol.GetSubstructMatches(Chem.MolFromSmarts(AMIDE)):
        amide[list(match)] = 1
    return heavy, amide


def build_table(raw_dir: Path, rows: int, path: Path) -> dict:
    from rdkit import Chem
    from rdkit.Chem import Crippen

    source = raw_dir / "zinc" / "jtvae_test.txt.gz"
    with gzip.open(source, "rt") as f:
        smiles = [line.strip() for _, line in zip(range(rows), f)]
    pattern = Chem.MolFromSmarts(AMIDE)
    records, worst = [], 0.0
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        contrib, _ = atom_truth(s)
        worst = max(worst, abs(contrib.sum() - Crippen.MolLogP(mol)))
        records.append({"smiles": s, "crippen_logp": contrib.sum(),
                        "amide_count": len(mol.GetSubstructMatches(pattern))})
    if worst > 1e-6:
        raise RuntimeError(f"heavy-atom Crippen contributions miss MolLogP by {worst}")
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(records)
    frame.to_csv(path, index=False, float_format="%.5f")
    return {"source": str(source), "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
            "rows": rows, "table": str(path),
            "table_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "molecules_with_amide": int((frame.amide_count > 0).sum()),
            "max_abs(sum contributions - MolLogP)": worst}


def train(model: str, table: Path, run: Path, epochs: int, seed: int) -> list[str]:
    cmd = ["graphnorm", "train", "--data", str(table), "--target-columns", *TARGETS,
           "--task", "regression", "--split", "random", "--split-seed", "0", "--model", model,
           "--preset", PRESET[model], "--max-epochs", str(epochs), "--seed", str(seed),
           "--threads", "1", "--no-progress", "--out", str(run)]
    if not (run / "metrics.json").is_file():
        exe = Path(sys.executable).parent / "graphnorm"
        subprocess.run([str(exe)] + cmd[1:], check=True)
    return cmd


def split_rows(run: Path) -> tuple[list[int], list[int]]:
    """Table row indices of the run's train and test splits (splits.json names CSV lines;
    line 2 is row 0)."""
    splits = json.loads((run / "splits.json").read_text())

    def rows(labels):
        return sorted(int(str(label).split()[-1]) - 2 for label in labels)

    return rows(splits["train"]), rows(splits["test"])


def per_molecule(scores: list, truth: list, amide: list) -> dict:
    """Per molecule (NaN where undefined): Spearman of the logP scores with the contributions
    (needs 3+ atoms and non-constant values), ROC-AUC of the amide scores (needs both classes)."""
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    rhos, aucs = [], []
    for s, c, a in zip(scores, truth, amide):
        ok = len(c) > 2 and np.ptp(c) > 0 and np.ptp(s[:, 0]) > 0
        rhos.append(spearmanr(s[:, 0], c).statistic if ok else np.nan)
        aucs.append(roc_auc_score(a, s[:, 1]) if 0 < a.sum() < len(a) else np.nan)
    return {"spearman_logp": np.array(rhos), "auroc_amide": np.array(aucs)}


def summary(v: np.ndarray) -> dict:
    v = v[np.isfinite(v)]
    return {"mean": round(float(v.mean()), 4), "std": round(float(v.std()), 4),
            "sem": round(float(v.std(ddof=1) / np.sqrt(len(v))), 4), "n": int(len(v))}


def molecule_metrics(scores: list, truth: list, amide: list) -> dict:
    """Mean/std/sem/count over molecules of :func:`per_molecule`."""
    return {k: summary(v) for k, v in per_molecule(scores, truth, amide).items()}


def paired(a: np.ndarray, b: np.ndarray) -> dict:
    """Mean of a - b over molecules where both are defined, its sem and 95 % t-interval."""
    from scipy.stats import t

    d = (a - b)[np.isfinite(a) & np.isfinite(b)]
    sem = d.std(ddof=1) / np.sqrt(len(d))
    half = t.ppf(0.975, len(d) - 1) * sem
    return {"mean": round(float(d.mean()), 4), "sem": round(float(sem), 4),
            "ci95": [round(float(d.mean() - half), 4), round(float(d.mean() + half), 4)],
            "n": int(len(d))}


def references(smiles: list, train_idx: list, test_idx: list, seed: int) -> dict:
    """Scores without a model: element mean (from the training split) and random."""
    from rdkit import Chem

    sums: dict = {}
    for i in train_idx:
        c, a = atom_truth(smiles[i])
        for atom, ci, ai in zip(Chem.MolFromSmiles(smiles[i]).GetAtoms(), c, a):
            t = sums.setdefault(atom.GetSymbol(), [0.0, 0.0, 0])
            t[0], t[1], t[2] = t[0] + ci, t[1] + ai, t[2] + 1
    rng = np.random.default_rng(seed)
    truths = [atom_truth(smiles[i]) for i in test_idx]
    elem, rand = [], []
    for i, (c, _) in zip(test_idx, truths):
        syms = [a.GetSymbol() for a in Chem.MolFromSmiles(smiles[i]).GetAtoms()]
        elem.append(np.array([[sums[s][0] / sums[s][2], sums[s][1] / sums[s][2]] if s in sums
                              else [0.0, 0.0] for s in syms]))
        rand.append(rng.standard_normal((len(c), 2)))
    truth, amide = [t[0] for t in truths], [t[1] for t in truths]
    return {"element mean (no model)": molecule_metrics(elem, truth, amide),
            "random (no model)": molecule_metrics(rand, truth, amide)}


def treeshap_reference(smiles: list, table: Path, train_idx: list, test_idx: list) -> dict:
    """The ADMET panel's booster attributions on the same targets: one booster per target in
    rule J's config on Morgan counts + RDKit's fast descriptors (graphnorm/pretrain/readout.py),
    fitted on the training split; atom scores = TreeSHAP of the Morgan bits shared among each
    bit's substructure atoms (graphnorm/explain/tree_atoms.py)."""
    from rdkit import Chem

    from graphnorm.chem.descriptors import rdkit_descriptors
    from graphnorm.explain.tree_atoms import morgan_atom_scores
    from graphnorm.panel.boosters import (MORGAN_BITS, booster_estimator, morgan_counts,
                                          readout_features)

    frame = pd.read_csv(table)

    def features(rows):
        desc = np.concatenate([rdkit_descriptors(Chem.MolFromSmiles(smiles[i]), smiles[i], "fast")
                               for i in rows])
        return readout_features(morgan_counts([smiles[i] for i in rows]), desc)

    x_train, x_test = features(train_idx), features(test_idx)
    start = time.perf_counter()
    scores = [np.zeros((len(atom_truth(smiles[i])[0]), len(TARGETS))) for i in test_idx]
    mae = []
    for j, target in enumerate(TARGETS):
        est = booster_estimator(False, None).fit(x_train, frame[target].to_numpy()[train_idx])
        mae.append(float(np.mean(np.abs(est.predict(x_test) - frame[target].to_numpy()[test_idx]))))
        phi = est.model.predict(x_test, pred_contrib=True)
        for k, i in enumerate(test_idx):
            scores[k][:, j] = morgan_atom_scores(smiles[i], phi[k, :MORGAN_BITS])
    seconds = time.perf_counter() - start
    truths = [atom_truth(smiles[i]) for i in test_idx]
    values = per_molecule(scores, [t[0] for t in truths], [t[1] for t in truths])
    return {"test_mae_per_target": mae,
            "treeshap": {**{k: summary(v) for k, v in values.items()},
                         "ms_per_molecule": round(1000 * seconds / len(test_idx), 2)}}


def evaluate(run: Path, smiles: list, test_idx: list, steps: int) -> dict:
    from graphnorm.explain.explainer import load_explainer

    truths = [atom_truth(smiles[i]) for i in test_idx]
    out, values = {}, {}
    for method in METHODS:
        try:
            explainer = load_explainer(run, method=method, steps=steps)
        except ValueError:
            if method == "rollout":  # GINE / GIN-VN: no attention to roll out
                continue
            raise
        assert explainer.targets == list(TARGETS), explainer.targets
        start = time.perf_counter()
        ex = explainer.explain([smiles[i] for i in test_idx])
        seconds = time.perf_counter() - start
        if (ex.molecules.error != "").any():
            raise RuntimeError(f"test molecules failed: {ex.molecules.error[ex.molecules.error != ''].iloc[0]}")
        scores = [ex.scores[k] for k in range(len(test_idx))]
        if method == "ig":  # completeness on real molecules: sum of IG vs F(e) - F(0)
            out["ig_completeness"] = completeness(explainer, [smiles[i] for i in test_idx], scores)
        values[method] = per_molecule(scores, [t[0] for t in truths], [t[1] for t in truths])
        out[method] = {**{k: summary(v) for k, v in values[method].items()},
                       "ms_per_molecule": round(1000 * seconds / len(test_idx), 2)}
    out["paired ig - occlusion"] = {k: paired(values["ig"][k], values["occlusion"][k])
                                    for k in values["ig"]}
    return out


def completeness(explainer, smiles: list, scores: list) -> dict:
    """Median and 95th percentile over molecules and targets of
    |sum_i IG_i - (F(e) - F(0))| / |F(e) - F(0)|."""
    import torch

    from graphnorm.explain.methods import model_output

    pred, loaded = explainer.predictor, explainer.predictor.loaded
    graphs, _ = pred.featurize(smiles)
    rel = []
    with torch.no_grad():
        for chunk, batch in pred.batches(graphs):
            delta = model_output(loaded, batch) - model_output(loaded, batch, lambda e: 0 * e)
            for b, (i, _) in enumerate(chunk):
                rel.extend((np.abs(scores[i].sum(0) - delta[b].numpy()) / np.abs(delta[b].numpy())).tolist())
    return {"median_rel_error": round(float(np.median(rel)), 5),
            "p95_rel_error": round(float(np.percentile(rel, 95)), 5)}


def hardware() -> dict:
    import torch

    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(),
            "load_average_at_end": list(os.getloadavg())}


def _cell(m: dict) -> str:
    return f"{m['mean']:.3f} ± {m['sem']:.3f} (n={m['n']})"


def write_report(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "faithfulness.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Faithfulness of `graphnorm explain` (atoms with known contributions)", "",
             f"Command: `{result['command']}`", "",
             f"git sha `{result['git_sha']}`, seeds: training {result['seed']}, split 0, "
             f"random reference {result['seed']}; {result['hardware']['cpu']}, "
             f"{result['hardware']['cores']} cores, torch {result['hardware']['torch']}, "
             f"one thread. Data: first {result['data']['rows']} molecules of "
             f"`zinc/jtvae_test.txt.gz` (sha256 `{result['data']['source_sha256'][:12]}…`), "
             f"random split 80/10/10; {result['data']['molecules_with_amide']} molecules have an amide.",
             "", "Per test molecule: Spearman ρ of the `crippen_logp` atom scores with the true "
             "Crippen contributions; ROC-AUC of the `amide_count` atom scores for amide atoms "
             "(molecules with an amide and other atoms). Mean ± standard error (n molecules).", "",
             "| model | test MAE logP / amides | method | Spearman ρ (logP) | AUROC (amide) | ms / molecule |",
             "|---|---|---|---|---|---|"]
    for model, r in result["models"].items():
        mae = " / ".join(f"{v:.3f}" for v in r["test_mae_per_target"])
        for method in METHODS:
            if method in r["methods"]:
                m = r["methods"][method]
                lines.append(f"| {model} | {mae} | {method} | {_cell(m['spearman_logp'])} | "
                             f"{_cell(m['auroc_amide'])} | {m['ms_per_molecule']} |")
        d = r["methods"].get("paired ig - occlusion")
        if d:
            cells = [f"{d[k]['mean']:+.3f} [{d[k]['ci95'][0]:+.3f}, {d[k]['ci95'][1]:+.3f}]"
                     for k in ("spearman_logp", "auroc_amide")]
            lines.append(f"| {model} | | ig − occlusion, paired (95 % CI) | {cells[0]} | {cells[1]} | |")
        comp = r["methods"].get("ig_completeness")
        if comp:
            lines.append(f"| {model} | | ig completeness: median / p95 relative error of "
                         f"Σ IG vs F(e) − F(0) | {comp['median_rel_error']} / "
                         f"{comp['p95_rel_error']} | | |")
    b = result.get("booster")
    if b:
        mae = " / ".join(f"{v:.3f}" for v in b["test_mae_per_target"])
        m = b["treeshap"]
        lines.append(f"| panel booster (Morgan + fast descriptors, rule J's config) | {mae} | "
                     f"treeshap | {_cell(m['spearman_logp'])} | {_cell(m['auroc_amide'])} | "
                     f"{m['ms_per_molecule']} |")
    for name, m in result["references"].items():
        lines.append(f"| {name} | | | {_cell(m['spearman_logp'])} | {_cell(m['auroc_amide'])} | |")
    lines += ["", f"Winner (default `--method`): **{result['winner']}** — {result['winner_rule']}.", ""]
    (out / "faithfulness.md").write_text("\n".join(lines))


def pick_winner(models: dict) -> str:
    """The method with the best mean rank over every (model, metric) cell it could run in."""
    ranks: dict = {}
    for r in models.values():
        for metric in ("spearman_logp", "auroc_amide"):
            cells = sorted((-r["methods"][m][metric]["mean"], m) for m in METHODS if m in r["methods"])
            for rank, (_, m) in enumerate(cells, 1):
                ranks.setdefault(m, []).append(rank)
    return min(ranks, key=lambda m: (np.mean(ranks[m]), m))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--raw-dir", default=os.environ.get("GRAPHNORM_RAW_DIR", "../shared/datasets"))
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--models", default="graphormer,gine")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=32, help="integrated-gradient steps")
    p.add_argument("--runs", default="runs/explain-faithfulness", help="training runs (gitignored)")
    p.add_argument("--out", default="experiments/results/explain")
    args = p.parse_args(argv)
    import torch

    from graphnorm.provenance import git_sha

    torch.set_num_threads(1)
    table = Path("data/derived") / f"explain_zinc{args.rows}.csv"
    data = build_table(Path(args.raw_dir), args.rows, table)
    smiles = pd.read_csv(table).smiles.tolist()
    result = {"command": "python experiments/explain_faithfulness.py " + " ".join(argv or sys.argv[1:]),
              "git_sha": git_sha(), "seed": args.seed, "data": data, "models": {}}
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        run = Path(args.runs) / f"{model}-e{args.epochs}-s{args.seed}"
        cmd = train(model, table, run, args.epochs, args.seed)
        metrics = json.loads((run / "metrics.json").read_text())
        train_idx, test_idx = split_rows(run)
        per_target = metrics["per_target"]["test"]
        result["models"][model] = {
            "train_command": " ".join(cmd), "run": str(run),
            "test_mae_per_target": [per_target[t]["mae"] for t in TARGETS],
            "test_molecules": len(test_idx), "methods": evaluate(run, smiles, test_idx, args.steps)}
        print(json.dumps({model: result["models"][model]["methods"]}, indent=1), flush=True)
    result["references"] = references(smiles, train_idx, test_idx, args.seed)
    result["booster"] = treeshap_reference(smiles, table, train_idx, test_idx)
    result["winner"] = pick_winner(result["models"])
    result["winner_rule"] = ("best mean rank over the (model, metric) cells; rollout runs on the "
                             "Graphormer only")
    result["hardware"] = hardware()
    write_report(result, Path(args.out))
    print((Path(args.out) / "faithfulness.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
