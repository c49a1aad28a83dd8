"""Token normalizations with one interface, independent of graphs, text and vision."""
from .base import TokenNorm
from .basic import BatchNorm, LayerNorm, NoNorm, RMSNorm
from .calibrate import batch_stat_norms, keep_batch_moments, load_batch_moments, recalibrate_batch_stats
from .isobn import IsoBN, VectorIsoBN
from .patch import DualPatchNorm
from .registry import BASE_NORMS, NORM_SPECS, build_norm, constant_special_spec
from .sep import SepNorm

__all__ = [
    "TokenNorm", "BatchNorm", "LayerNorm", "NoNorm", "RMSNorm", "IsoBN", "VectorIsoBN", "SepNorm",
    "DualPatchNorm", "batch_stat_norms", "keep_batch_moments", "load_batch_moments",
    "recalibrate_batch_stats", "BASE_NORMS", "NORM_SPECS",
    "build_norm", "constant_special_spec",
]
