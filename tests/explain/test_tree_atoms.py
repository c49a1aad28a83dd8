"""TreeSHAP contributions of Morgan bits shared among the atoms of their substructures
(graphnorm/explain/tree_atoms.py)."""
import numpy as np
import pytest


def test_a_bit_scores_exactly_the_atoms_of_its_environments():
    from graphnorm.explain.tree_atoms import morgan_atom_scores, morgan_environments

    envs = morgan_environments("CCO", 2048)
    # the hydroxyl oxygen alone (radius 0) and the whole molecule (radius 2 around C1)
    alone = next(b for b, e in envs.items() if e == [(2,)])
    whole = next(b for b, e in envs.items() if e == [(0, 1, 2)])
    phi = np.zeros(2048)
    phi[alone] = 0.6
    assert morgan_atom_scores("CCO", phi).tolist() == pytest.approx([0, 0, 0.6])
    phi[:] = 0
    phi[whole] = 0.9
    assert morgan_atom_scores("CCO", phi).tolist() == pytest.approx([0.3, 0.3, 0.3])


def test_the_atoms_share_what_the_present_bits_contribute_and_nothing_else():
    from graphnorm.explain.tree_atoms import morgan_atom_scores, morgan_environments

    smiles = "CC(=O)Oc1ccccc1C(=O)O"
    phi = np.random.default_rng(0).normal(size=2048)
    present = sorted(morgan_environments(smiles, 2048))
    scores = morgan_atom_scores(smiles, phi)
    assert len(scores) == 13 and scores.sum() == pytest.approx(phi[present].sum())


def test_an_unreadable_smiles_is_named():
    from graphnorm.explain.tree_atoms import morgan_environments

    with pytest.raises(ValueError, match="C1CC"):
        morgan_environments("C1CC", 2048)
