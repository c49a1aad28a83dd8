"""Chemistry below the data layer: SMILES -> RDKit molecule -> feature arrays.

    from graphnorm.chem import FeaturizerConfig, featurize_many
    result = featurize_many(["CCO", "C1CC"], FeaturizerConfig(vocab="zinc"))
    result.graphs[0]["spd"], result.errors[1]   # arrays of CCO, the message naming C1CC

`config` (the settings data and model share), `molecule` (RDKit parsing, sanitization and
atom/bond features), `paths` (shortest-path distances and edge paths), `featurize` (the one
worker pool). Contract 2 in docs/design.md.
"""
from .config import FEATURIZER_VERSION, VOCABS, FeaturizerConfig, vocab_dims
from .featurize import (FIELDS, FINGERPRINT, Featurized, MoleculeGraph, featurize_many,
                        featurize_smiles, graph_data, smiles_to_data)
from .molecule import (SANITIZE_MODES, ZINC_ATOM_DICT, FeaturizationError, mol_from_smiles,
                       mol_to_graph, smiles_to_graph, zinc_atom_label)

__all__ = [
    "FEATURIZER_VERSION", "VOCABS", "FeaturizerConfig", "vocab_dims",
    "FIELDS", "FINGERPRINT", "Featurized", "MoleculeGraph", "featurize_many", "featurize_smiles",
    "graph_data", "smiles_to_data",
    "SANITIZE_MODES", "ZINC_ATOM_DICT", "FeaturizationError", "mol_from_smiles", "mol_to_graph",
    "smiles_to_graph", "zinc_atom_label",
]
