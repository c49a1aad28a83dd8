"""Text adapters: a BERT-style encoder with pluggable (separate) norms, and SepNorm for HF models.

``hf_convert`` works on Hugging Face BERT/RoBERTa modules but does not import ``transformers``
itself; building such a model needs the optional extra ``text`` (``transformers>=4.40``).
"""
from graphnorm.norms import VectorIsoBN

from .encoder import CLSHead, TextClassifier, TextEncoder
from .hf_convert import (
    HFSepNorm, PaddingContext, add_isobn_head, calibrate_batchnorm, converted_padding,
    sepnorm_convert,
)

__all__ = [
    "TextEncoder", "TextClassifier", "CLSHead", "VectorIsoBN",
    "sepnorm_convert", "add_isobn_head", "calibrate_batchnorm", "converted_padding",
    "HFSepNorm", "PaddingContext",
]
