"""The committed fixture table (tests/fixtures/zinc_properties.csv) is what its docstring in
tests/conftest.py says: the first 500 molecules of the real ZINC test file with RDKit's
Crippen logP, TPSA and QED > 0.7 (slow tier: it reads the raw file)."""
import gzip

import pandas as pd


def test_the_committed_property_table_is_rebuilt_from_the_raw_file(raw_dir, zinc_property_table):
    from rdkit import Chem
    from rdkit.Chem import QED, Descriptors

    with gzip.open(raw_dir / "zinc" / "jtvae_test.txt.gz", "rt") as f:
        smiles = [line.strip() for _, line in zip(range(500), f)]
    rows = []
    for k, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s)
        rows.append({"id": f"Z{k}", "smiles": s, "logp": round(Descriptors.MolLogP(mol), 3),
                     "tpsa": round(Descriptors.TPSA(mol), 2), "qed_high": int(QED.qed(mol) > 0.7)})
    pd.testing.assert_frame_equal(zinc_property_table, pd.DataFrame(rows), check_exact=True)
