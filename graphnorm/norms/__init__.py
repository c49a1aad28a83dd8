"""Token normalizations with one interface, independent of graphs, text and vision."""
from .base import TokenNorm
from .basic import BatchNorm, LayerNorm, NoNorm, RMSNorm
from .isobn import IsoBN
from .patch import DualPatchNorm
from .registry import BASE_NORMS, NORM_SPECS, build_norm, constant_special_spec
from .sep import SepNorm

__all__ = [
    "TokenNorm", "BatchNorm", "LayerNorm", "NoNorm", "RMSNorm", "IsoBN", "SepNorm",
    "DualPatchNorm", "BASE_NORMS", "NORM_SPECS", "build_norm", "constant_special_spec",
]
