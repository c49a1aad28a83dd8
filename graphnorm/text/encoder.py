"""A small BERT-style text encoder whose norms come from :func:`graphnorm.norms.build_norm`.

Devlin et al. 2018, "BERT", https://arxiv.org/abs/1810.04805. The input sequence is
``[CLS] x_1 ... x_n [PAD] ...`` with [CLS] at position 0, embedded as

    e_t = E_tok[x_t] + E_pos[t] (+ E_seg[s_t]),    h^0 = Norm_emb(e)

and passed through ``depth`` blocks. Post-LN blocks (BERT, Vaswani et al. 2017) compute

    h' = Norm_1(h + Attn(h)),    h_out = Norm_2(h' + MLP(h'))

pre-LN blocks (Xiong et al. 2020, https://arxiv.org/abs/2002.04745) compute

    h' = h + Attn(Norm_1(h)),    h_out = h' + MLP(Norm_2(h'))

followed by one final norm. Every norm is called as ``norm(x, padding_mask)``, so batch
statistics (``bn``, ``isobn``, ``sep:bn+...``) are taken over real tokens only. With a
``sep:A+B`` spec, A normalizes the [CLS] token and B the other tokens (SepNorm, Chen et al.
2023, https://arxiv.org/abs/2309.12931, Eq. 5).

Attention is ``softmax(Q K^T / sqrt(d_head) + M) V`` with ``M = -inf`` on padded keys
(``torch.nn.functional.scaled_dot_product_attention``). Outputs at padded positions are
defined but meaningless; real-token outputs never depend on them. Blocks, embedding/final
norm and the constant-[CLS] rule are the shared core (:class:`graphnorm.nn.TransformerEncoder`).

Constant [CLS]. Before the first attention the [CLS] vector ``E_tok[CLS] + E_pos[0]`` is
the same for every sequence; by default (``constant_cls_ln=True``) the norm that sees it --
the embedding norm (post-LN) or the first block's first norm (pre-LN) -- uses ``ln`` for the
[CLS] channel of a ``sep:bn+B`` / ``sep:isobn+B`` spec (see :mod:`graphnorm.nn.encoder`).

The optional head classifies the final [CLS] vector, optionally through IsoBN right before
the linear classifier, as in Zhou et al. 2021, https://arxiv.org/abs/2005.02178, Sec. 4.3.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from graphnorm.nn import TransformerEncoder
from graphnorm.norms import TokenNorm, VectorIsoBN


def _bert_init(module: nn.Module, std: float = 0.02) -> None:
    """BERT initialization: N(0, 0.02) weights, zero biases."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=std)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)


class TextEncoder(nn.Module):
    """BERT-style encoder: ``(input_ids [B, L], padding_mask [B, L]) -> hidden [B, L, D]``.

    Args:
        vocab_size: number of token ids; ``input_ids[:, 0]`` must be the [CLS] id.
        dim, depth, heads, mlp_ratio: transformer width, number of blocks, heads, MLP factor.
        max_len: number of learned positions.
        type_vocab_size: segment ids (0 disables segment embeddings).
        norm: any spec of :func:`build_norm` (``ln``, ``sep:bn+ln``, ...), used for the
            embedding norm and every block norm.
        pre_norm: pre-LN blocks plus a final norm instead of BERT's post-LN.
        pad_id: if given, ``padding_mask`` defaults to ``input_ids == pad_id``.
        constant_cls_ln: use ``ln`` for [CLS] in the one norm that sees the constant [CLS]
            embedding (see module doc); False applies ``norm`` everywhere.
    """

    def __init__(self, vocab_size: int, dim: int = 64, depth: int = 2, heads: int = 4,
                 mlp_ratio: int = 4, max_len: int = 512, type_vocab_size: int = 0,
                 norm: str = "ln", pre_norm: bool = False, dropout: float = 0.1,
                 pad_id: Optional[int] = 0, isobn_beta: float = 0.5,
                 constant_cls_ln: bool = True):
        super().__init__()
        self.dim, self.pad_id, self.norm_spec, self.pre_norm = dim, pad_id, norm, pre_norm
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.seg = nn.Embedding(type_vocab_size, dim) if type_vocab_size else None
        # Pre-LN transformers normalize inside each block; BERT normalizes the embeddings.
        self.transformer = TransformerEncoder(
            dim, depth, heads, mlp_ratio * dim, norm=norm, pre_norm=pre_norm, dropout=dropout,
            attention_dropout=dropout, input_dropout=dropout, constant_special_ln=constant_cls_ln,
            isobn_beta=isobn_beta)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _bert_init(self)
        for m in self.modules():
            if isinstance(m, TokenNorm):  # linears stay BERT-initialized
                m.reset_parameters()

    def padding_mask_for(self, input_ids: Tensor, padding_mask: Optional[Tensor]) -> Optional[Tensor]:
        if padding_mask is not None:
            return padding_mask.bool()
        if self.pad_id is None:
            return None
        mask = input_ids.eq(self.pad_id)
        mask[:, 0] = False  # position 0 is [CLS], never padding
        return mask

    def forward(self, input_ids: Tensor, padding_mask: Optional[Tensor] = None,
                token_type_ids: Optional[Tensor] = None) -> Tensor:
        B, L = input_ids.shape
        m = self.padding_mask_for(input_ids, padding_mask)
        h = self.tok(input_ids) + self.pos(torch.arange(L, device=input_ids.device))
        if self.seg is not None:
            seg = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
            h = h + self.seg(seg)
        return self.transformer(h, m)  # [CLS] is input_ids[:, 0]


class CLSHead(nn.Module):
    """[CLS] classifier: ``h_0 -> [tanh(W_p h_0)] -> [IsoBN] -> dropout -> W h + b``.

    ``pooler`` adds BERT's dense+tanh pooler; ``isobn`` puts IsoBN right before the linear
    classifier (Zhou et al. 2021).
    """

    def __init__(self, dim: int, num_classes: int, isobn: bool = False, isobn_beta: float = 0.5,
                 pooler: bool = False, dropout: float = 0.1):
        super().__init__()
        self.pooler = nn.Sequential(nn.Linear(dim, dim), nn.Tanh()) if pooler else nn.Identity()
        self.isobn = VectorIsoBN(dim, isobn_beta) if isobn else nn.Identity()
        self.drop = nn.Dropout(dropout)
        self.classifier = nn.Linear(dim, num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _bert_init(self)
        if isinstance(self.isobn, VectorIsoBN):
            self.isobn.reset_parameters()

    def features(self, hidden: Tensor) -> Tensor:
        """The vector the linear classifier sees."""
        return self.isobn(self.pooler(hidden[:, 0]))

    def forward(self, hidden: Tensor) -> Tensor:
        return self.classifier(self.drop(self.features(hidden)))


class TextClassifier(nn.Module):
    """Encoder plus [CLS] head: ``(input_ids, padding_mask) -> logits [B, C]``."""

    def __init__(self, encoder: TextEncoder, num_classes: int, isobn_head: bool = False,
                 isobn_beta: float = 0.5, pooler: bool = False, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.head = CLSHead(encoder.dim, num_classes, isobn_head, isobn_beta, pooler, dropout)

    def reset_parameters(self) -> None:
        self.encoder.reset_parameters()
        self.head.reset_parameters()

    def forward(self, input_ids: Tensor, padding_mask: Optional[Tensor] = None,
                token_type_ids: Optional[Tensor] = None) -> Tensor:
        return self.head(self.encoder(input_ids, padding_mask, token_type_ids))

    @torch.no_grad()
    def cls_embedding(self, input_ids: Tensor, padding_mask: Optional[Tensor] = None,
                      token_type_ids: Optional[Tensor] = None) -> Tensor:
        """Final [CLS] hidden state ``[B, D]`` (encoder output, before the head)."""
        return self.encoder(input_ids, padding_mask, token_type_ids)[:, 0]
