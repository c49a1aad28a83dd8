"""A tiny corpus in the layout of ``admet_corpus`` (two corpora, mixed task kinds, one
molecule in both): the pre-training tests need no shared data."""
import csv
import gzip
from pathlib import Path

SMILES_A = ["CCO", "CCN", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC", "c1ccncc1",
            "CC(C)O", "OCC(O)CO", "c1ccc2ccccc2c1", "CC(=O)N", "CCOC(=O)C", "C1CCCCC1N"]
SMILES_B = ["CCO", "CCCl", "ClC(Cl)Cl", "c1ccc(Cl)cc1", "CC#N", "C=CC=C", "OC(=O)CC(=O)O",
            "NCCN", "CCCCO", "c1cc[nH]c1"]


def write_corpus(root: Path, name: str, smiles: list, columns: dict, kinds: dict) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    with gzip.open(folder / "data.csv.gz", "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(["smiles", *columns])
        for i, s in enumerate(smiles):
            w.writerow([s, *("" if columns[c][i] is None else columns[c][i] for c in columns)])
    with open(folder / "tasks.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "kind", "n_labeled"])
        for c in columns:
            w.writerow([c, kinds[c], sum(v is not None for v in columns[c])])


def make_tiny_corpus(tmp_path: Path) -> Path:
    """<tmp>/admet_corpus with corpora ``alpha`` (a regression and a binary task) and
    ``beta`` (two binary tasks); "CCO" is in both."""
    root = tmp_path / "admet_corpus"
    n_a, n_b = len(SMILES_A), len(SMILES_B)
    write_corpus(root, "alpha", SMILES_A,
                 {"logS": [float(i) / 3 - 1 for i in range(n_a)],
                  "toxic": [i % 2 if i % 3 else None for i in range(n_a)]},
                 {"logS": "regression", "toxic": "binary"})
    write_corpus(root, "beta", SMILES_B,
                 {"t1": [i % 2 for i in range(n_b)],
                  "t2": [(i // 2) % 2 if i != 3 else None for i in range(n_b)]},
                 {"t1": "binary", "t2": "binary"})
    (root / "corpora.csv").write_text("corpus,rows\nalpha,12\nbeta,10\n")
    return root
