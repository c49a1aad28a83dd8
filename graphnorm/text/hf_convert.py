"""Put SepNorm into a Hugging Face BERT / RoBERTa encoder (optional extra ``transformers``).

``sepnorm_convert(model, "sep:bn+ln")`` replaces every ``nn.LayerNorm`` of the encoder -- the
embeddings LayerNorm and, in each layer, the attention-output and output LayerNorms, i.e.
``1 + 2 * num_hidden_layers`` modules -- by :class:`HFSepNorm`, a wrapper around our
:class:`~graphnorm.norms.SepNorm` that takes HF's hidden states ``[B, L, D]``. Position 0 is
[CLS] (BERT) / ``<s>`` (RoBERTa). LayerNorms outside the encoder (e.g. the MLM head) are kept.

Initialization. Both channels copy the LayerNorm's weight, bias and eps, so ``sep:ln+ln``
reproduces the original model exactly right after conversion. A ``bn`` channel starts with
the LN's affine (gamma, beta) and eps but normalizes per channel over the batch instead of
per token, so outputs change from the first call: in training mode it uses batch statistics,
in evaluation mode running statistics, which start at mean 0 / variance 1 -- i.e. no
normalization at all -- until :func:`calibrate_batchnorm` or some training has filled them.

Constant [CLS]. The embeddings LayerNorm sees the same [CLS] vector (word + position 0 +
type 0 embedding) for every sequence; a ``bn``/``isobn`` [CLS] channel there would divide by
a vanishing running variance in evaluation (see :mod:`graphnorm.nn.encoder`). By default
(``constant_cls_ln=True``) that one module keeps ``ln`` for [CLS] (``sep:bn+ln`` becomes
``sep:ln+ln`` there); pass False to use ``spec`` everywhere.

Padding mask. HF calls ``LayerNorm(x)`` without a mask. :func:`sepnorm_convert` therefore
registers a forward pre-hook on the base model (``model.base_model``, which every task head
calls) that reads ``attention_mask`` (``[B, L]``, 1 = real) and stores ``padding_mask =
attention_mask == 0`` in a context shared by all wrappers; a forward hook clears it. So BN
statistics skip padding whenever the base model gets a 2-D ``attention_mask``. Limitations:
without ``attention_mask`` (or with a 4-D one) all tokens count as real, and calling a
submodule (e.g. ``model.bert.encoder``) directly bypasses the hook; use
``with converted_padding(model, padding_mask): ...`` then.

Checkpoints. Convert after ``from_pretrained``; the converted state dict has new keys
(``...LayerNorm.norm.special.norm.weight`` etc.), so reload one by converting a fresh model
with the same spec and calling ``load_state_dict``.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Iterable, Iterator, Optional

import torch
from torch import Tensor, nn

from graphnorm.nn import first_norm_spec
from graphnorm.norms import (
    BatchNorm, LayerNorm, SepNorm, VectorIsoBN, build_norm, recalibrate_batch_stats,
)


class PaddingContext:
    """The padding mask of the current forward pass, shared by all :class:`HFSepNorm`."""

    def __init__(self) -> None:
        self.padding_mask: Optional[Tensor] = None
        self._mask_index: Optional[int] = None

    def pre_hook(self, module: nn.Module, args: tuple, kwargs: dict) -> None:
        mask = kwargs.get("attention_mask")
        if mask is None:
            if self._mask_index is None:
                params = list(inspect.signature(module.forward).parameters)
                self._mask_index = params.index("attention_mask") if "attention_mask" in params else -1
            if 0 <= self._mask_index < len(args):
                mask = args[self._mask_index]
        # Only a [B, L] mask says which tokens are real; HF also accepts 4-D additive masks.
        self.padding_mask = mask.eq(0) if mask is not None and mask.dim() == 2 else None

    def post_hook(self, module: nn.Module, args: tuple, kwargs: dict, output) -> None:
        self.padding_mask = None


class HFSepNorm(nn.Module):
    """Drop-in for ``nn.LayerNorm`` in HF code: ``forward(x [B, L, D]) -> [B, L, D]``."""

    def __init__(self, norm: SepNorm, context: PaddingContext):
        super().__init__()
        self.norm = norm
        self.context = context  # plain attribute: shared, not a submodule

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x, self.context.padding_mask)

    def extra_repr(self) -> str:
        return f"spec={self.norm.spec!r}"


def _init_from_layernorm(norm: nn.Module, ln: nn.LayerNorm) -> None:
    """Copy weight, bias and eps of ``ln`` into one SepNorm channel."""
    with torch.no_grad():
        if isinstance(norm, LayerNorm):
            norm.norm.weight.copy_(ln.weight)
            norm.norm.bias.copy_(ln.bias)
            norm.norm.eps = ln.eps
        elif isinstance(norm, BatchNorm):
            norm.weight.copy_(ln.weight)
            norm.bias.copy_(ln.bias)
            norm.eps = ln.eps
        # rms/none/isobn: nothing comparable to copy (rms keeps its own weight = 1)


def _sepnorm_from_layernorm(ln: nn.LayerNorm, spec: str) -> SepNorm:
    if not spec.strip().lower().startswith("sep:"):
        raise ValueError(f"sepnorm_convert needs a 'sep:A+B' spec, got {spec!r}")
    dim = ln.normalized_shape[-1]
    norm = build_norm(spec, dim).to(device=ln.weight.device, dtype=ln.weight.dtype)
    _init_from_layernorm(norm.special, ln)
    _init_from_layernorm(norm.tokens, ln)
    return norm


def _encoder_parts(model: nn.Module) -> tuple[nn.Module, list[nn.Module]]:
    base = getattr(model, "base_model", model)
    parts = [getattr(base, name) for name in ("embeddings", "encoder") if hasattr(base, name)]
    if len(parts) != 2:
        raise TypeError(f"{type(model).__name__} does not look like a HF BERT/RoBERTa model")
    return base, parts


def sepnorm_convert(model: nn.Module, spec: str = "sep:ln+ln",
                    constant_cls_ln: bool = True) -> nn.Module:
    """Replace the encoder's LayerNorms of a HF BERT/RoBERTa ``model`` in place; return it.

    ``model.sepnorm_converted`` maps the names of the replaced modules to their specs.
    """
    base, parts = _encoder_parts(model)
    if getattr(base, "_sepnorm_context", None) is not None:
        raise RuntimeError("model is already converted")
    context = PaddingContext()
    replaced = {}
    for part in parts:
        # HF BERT is post-LN: its embeddings LayerNorm is the one that sees the constant [CLS]
        part_spec = first_norm_spec(spec, constant_cls_ln) if part is parts[0] else spec
        targets = [(n, m) for n, m in part.named_modules() if isinstance(m, nn.LayerNorm)]
        for name, ln in targets:
            parent_name, _, child = name.rpartition(".")
            parent = part.get_submodule(parent_name) if parent_name else part
            setattr(parent, child, HFSepNorm(_sepnorm_from_layernorm(ln, part_spec), context))
            replaced[f"{type(part).__name__}.{name}"] = part_spec
    base._sepnorm_context = context
    base.register_forward_pre_hook(context.pre_hook, with_kwargs=True)
    base.register_forward_hook(context.post_hook, with_kwargs=True, always_call=True)
    model.sepnorm_converted = replaced
    return model


@contextlib.contextmanager
def converted_padding(model: nn.Module, padding_mask: Optional[Tensor]) -> Iterator[None]:
    """Set the padding mask (True = pad) by hand, for calls that bypass the base model."""
    base, _ = _encoder_parts(model)
    context: PaddingContext = base._sepnorm_context
    old, context.padding_mask = context.padding_mask, padding_mask
    try:
        yield
    finally:
        context.padding_mask = old


def calibrate_batchnorm(model: nn.Module, batches: Iterable[dict]) -> None:
    """Fill running statistics of all batch-statistics norms with a cumulative average
    (``graphnorm.norms.recalibrate_batch_stats``); ``batches`` yields keyword dicts for
    ``model(**batch)`` (e.g. tokenizer outputs). Dropout is off during calibration."""
    recalibrate_batch_stats(model, batches, forward=lambda m, batch: m(**batch))


def add_isobn_head(model: nn.Module, beta: float = 0.5) -> nn.Module:
    """Insert IsoBN right before the final linear classifier of a sequence classifier.

    ``BertForSequenceClassification``: ``classifier`` -> ``Sequential(IsoBN, classifier)``
    (after pooler and dropout). ``RobertaForSequenceClassification``: same for
    ``classifier.out_proj``. The classifier weights are kept. Zhou et al. 2021, Sec. 4.3.
    """
    host, name = model, "classifier"
    linear = getattr(model, "classifier", None)
    if linear is not None and not isinstance(linear, nn.Linear) and hasattr(linear, "out_proj"):
        host, name, linear = linear, "out_proj", linear.out_proj
    if not isinstance(linear, nn.Linear):
        raise TypeError(f"{type(model).__name__} has no linear classifier to put IsoBN in front of")
    iso = VectorIsoBN(linear.in_features, beta).to(linear.weight.device)
    setattr(host, name, nn.Sequential(iso, linear))
    return model
