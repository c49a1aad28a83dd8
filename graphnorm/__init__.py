"""graphnorm: Graphormer with separate normalization of the [VNode] token."""
__version__ = "0.1.0"
