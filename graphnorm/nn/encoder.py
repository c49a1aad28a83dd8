"""The encoder stack shared by the Graphormer, the text encoder and ViT.

With ordinary tokens x_1..x_N and the special token s ([VNode] / [CLS]) at position 0:

    h^0 = Drop_in(Norm_emb([s; x_1 ... x_N]))     (Norm_emb only in post-norm stacks)
    h^l = Block_l(h^{l-1}; A)                      l = 1..depth
    out = Norm_final(h^depth)                      (only in pre-norm stacks)

The constant-special-token rule lives here, once. Before any attention the special token is
the same learned vector for every sample, so a batch-statistics norm (BN, IsoBN) on its
channel sees zero batch variance: in training it outputs its bias, its running variance
decays to 0, and in evaluation every drift of the embedding is amplified up to 1/sqrt(eps)
~ 316x. The one norm that sees the constant token -- the first block's attention norm in a
pre-norm stack, the embedding norm in a post-norm stack (BERT; also a Hugging Face model's
embeddings LayerNorm) -- therefore gets ``first_norm_spec(spec)``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch
from torch import Tensor, nn

from ..norms import build_norm, constant_special_spec
from .block import TransformerBlock
from .packing import TokenPacking
from .dropout import dropout as input_dropout


def first_norm_spec(spec: str, constant_special_ln: bool = True) -> str:
    """Spec of the norm that sees the constant special token: a batch-statistics special
    channel becomes ``ln`` (``sep:bn+ln`` -> ``sep:ln+ln``), unless switched off."""
    return constant_special_spec(spec) if constant_special_ln else spec


class TransformerEncoder(nn.Module):
    r"""A stack of :class:`~graphnorm.nn.TransformerBlock` with the special token at position 0.

    .. math::
        h^0 = \mathrm{Drop}(N_{emb}([s; x])), \qquad h^l = \mathrm{Block}_l(h^{l-1}; A),
        \qquad \mathrm{out} = N_{final}(h^{L})

    :math:`N_{emb}` exists in post-norm stacks (BERT, `Devlin et al. 2018
    <https://arxiv.org/abs/1810.04805>`_), :math:`N_{final}` in pre-norm stacks
    (`Xiong et al. 2020 <https://arxiv.org/abs/2002.04745>`_). The first norm that sees the
    constant special token uses :func:`first_norm_spec` (module doc). With ``sep:A+B`` specs
    the special token gets norm A, the others B (`Chen et al. 2023
    <https://arxiv.org/abs/2309.12931>`_, Eq. 5).

    Args:
        dim, depth, heads, ffn_hidden: width, number of blocks, heads, FFN hidden units.
        norm: spec of every block norm (and of the embedding norm).
        final_norm: spec of the final norm (default ``norm``).
        pre_norm: pre-norm blocks + final norm, or post-norm blocks + embedding norm.
        dropout, attention_dropout, input_dropout: residual, attention-probability and
            embedding dropout.
        constant_special_ln: apply the constant-special-token rule (default True).
        local: optional factory ``layer -> module`` of a local branch per block.
        attention: biased attention implementation ("auto" | "sdpa" | "math").
        init_std: block linears ~ N(0, init_std) (see :class:`TransformerBlock`).
        isobn_beta: beta of IsoBN norms.

    Shapes:
        ``forward(x [B, N, D], padding_mask [B, N] | None, special [1 or B, 1, D] | None,
        bias [B, H, L, L] | None, local_input=None) -> [B, L, D]``. With ``special`` the
        stack prepends it (L = N + 1) and extends ``padding_mask`` (never padding); without,
        ``x`` already holds the special token at position 0. ``bias`` must already be
        -inf at padded keys (a bias module builds it once per forward); without a bias
        the attention masks padded keys itself. With ``packing``
        (:class:`~graphnorm.nn.packing.TokenPacking`) the tokens travel packed: ``x [T, D]``
        (the ordinary tokens; ``[B + T, D]`` with the specials first when ``special`` is
        None) -> ``[B + T, D]``; the same function, without the padding's token-wise work.
    """

    def __init__(self, dim: int, depth: int, heads: int, ffn_hidden: int, norm: str = "ln",
                 final_norm: Optional[str] = None, pre_norm: bool = True,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 input_dropout: float = 0.0, constant_special_ln: bool = True,
                 local: Optional[Callable[[int], nn.Module]] = None, attention: str = "auto",
                 init_std: Optional[float] = None, isobn_beta: float = 0.5):
        super().__init__()
        self.pre_norm, self.input_dropout = pre_norm, input_dropout
        first = first_norm_spec(norm, constant_special_ln)
        self.emb_norm = None if pre_norm else build_norm(first, dim, isobn_beta)
        self.blocks = nn.ModuleList(
            TransformerBlock(dim, heads, ffn_hidden, first if pre_norm and i == 0 else norm,
                             norm, dropout, attention_dropout, pre_norm,
                             local(i) if local is not None else None, attention, init_std,
                             isobn_beta)
            for i in range(depth)
        )
        spec = norm if final_norm is None else final_norm
        self.final_norm = build_norm(spec, dim, isobn_beta) if pre_norm else None

    def reset_parameters(self) -> None:
        for m in (self.emb_norm, *self.blocks, self.final_norm):
            if m is not None:
                m.reset_parameters()

    def forward(self, x: Tensor, padding_mask: Optional[Tensor] = None,
                special: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                local_input: Any = None, packing: Optional[TokenPacking] = None) -> Tensor:
        if packing is not None:
            return self._packed(x, special, bias, local_input, packing)
        pad = padding_mask
        if special is not None:
            B = x.shape[0]
            x = torch.cat([special.expand(B, 1, -1), x], dim=1)
            if pad is not None:
                pad = torch.cat([pad.new_zeros(B, 1), pad], dim=1)
        if self.emb_norm is not None:
            x = self.emb_norm(x, pad)
        h = input_dropout(x, self.input_dropout, self.training)
        key_pad = pad if bias is None else None
        for block in self.blocks:
            h = block(h, pad, bias, key_pad, local_input)
        return h if self.final_norm is None else self.final_norm(h, pad)

    def _packed(self, x: Tensor, special: Optional[Tensor], bias: Optional[Tensor],
                local_input: Any, packing: TokenPacking) -> Tensor:
        """``forward`` on packed tokens: x ``[T, D]`` ordinary tokens (or ``[B + T, D]`` with
        the specials first when ``special`` is None) -> ``[B + T, D]``."""
        if special is not None:
            x = torch.cat([special.expand(packing.specials, 1, -1).squeeze(1), x])
        S = packing.specials
        if self.emb_norm is not None:
            x = self.emb_norm.forward_packed(x, S)
        h = input_dropout(x, self.input_dropout, self.training, packing)
        key_pad = packing.padding_mask if bias is None else None
        for block in self.blocks:
            h = block(h, None, bias, key_pad, local_input, packing)
        return h if self.final_norm is None else self.final_norm.forward_packed(h, S)
