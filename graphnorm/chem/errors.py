"""The featurizer's one error type, apart so that every chem module can raise it without
importing another (no import cycles)."""


class FeaturizationError(ValueError):
    """A SMILES that cannot be featurized; the message names the SMILES."""
