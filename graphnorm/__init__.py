"""graphnorm: Graphormer with separate normalization of the [VNode] token."""
__version__ = "0.1.0"


def load_predictor(checkpoint, batch_size: int = 128):
    """Load a trained checkpoint for prediction from SMILES (see graphnorm.predict)."""
    from graphnorm.predict import load_predictor as _load

    return _load(checkpoint, batch_size=batch_size)
