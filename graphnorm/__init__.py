"""graphnorm: Graphormer with separate normalization of the [VNode] token."""
__version__ = "0.1.0"

from graphnorm.quiet import silence_third_party_noise as _silence  # noqa: E402

_silence()  # Lightning's ads and torch_geometric's import-time jit warning (see quiet.py)


def load_predictor(checkpoint, batch_size: int = 128):
    """Load a trained checkpoint for prediction from SMILES (see graphnorm.inference.predict)."""
    from graphnorm.inference.predict import load_predictor as _load

    return _load(checkpoint, batch_size=batch_size)
