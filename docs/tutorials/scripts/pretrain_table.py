"""A pre-training table: computed properties (RDKit) of molecules without measurements.

Here the SMILES of mols.csv and new.csv; experiments/make_pretrain_table.py writes the
same kind of table for the 220,011 ZINC250k training molecules.
"""
import pandas as pd
from rdkit import Chem
from rdkit.Chem import Descriptors

smiles = pd.concat([pd.read_csv("mols.csv"), pd.read_csv("new.csv")])["smiles"]
rows = []
for s in smiles:
    mol = Chem.MolFromSmiles(s)
    rows.append({"smiles": s, "MolLogP": Descriptors.MolLogP(mol),
                 "TPSA": Descriptors.TPSA(mol), "MolWt": Descriptors.MolWt(mol)})
pd.DataFrame(rows).to_csv("pretrain.csv", index=False)
print(f"pretrain.csv: {len(rows)} molecules, 3 computed targets")
