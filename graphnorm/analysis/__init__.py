"""Analysis of the [VNode]/[CLS] embedding: uniformity, spectra, explained variance, plots.

`metrics` holds the numbers (seed paper Eq. 4 and 8, Fig. 4b/c; IsoBN Sec. 5.3), `plots` the
comparison figures (seed paper Fig. 2 and 4b/c, IsoBN Fig. 7). The plot functions are loaded
on first use so that training code importing `uniformity_loss` does not import matplotlib.
"""
from .metrics import (
    effective_rank,
    embedding_report,
    explained_variance,
    explained_variance_curve,
    singular_values,
    spectral_uniformity_loss,
    uniformity,
    uniformity_loss,
)

_PLOTS = ("plot_spectra", "plot_dimension_distributions", "plot_explained_variance")

from .metrics import __all__ as _METRICS

__all__ = [*_METRICS, *_PLOTS]


def __getattr__(name: str):
    if name in _PLOTS:
        from . import plots

        return getattr(plots, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
