"""One output per quantity, an offset per source: the pre-training head of ``--targets
quantities``.

Sources that measure one quantity (`graphnorm.quantities`: logD from three ChEMBL and AZ
collections, solubility from five) are columns of one target, not unrelated tasks. With
their labels converted into the quantity's unit and standardized by the quantity's pooled
mean and deviation (`objective.TaskScaling.fit` with ``groups``), the head predicts, for
source column t of quantity q(t),

    z_t = w_{q(t)} . h + b_{q(t)} + o_t

one weight vector and bias per quantity, shared by its sources, plus a learned offset o_t per
source: an assay's bias (a buffer, a read-out time) moves its offset, not the quantity.
Every unmapped endpoint is a group of its own (z_t = w_t . h + b_t + o_t, plainly linear).
Without the map, 2-5 columns of one quantity are separate heads, and nothing tells the
backbone they rank molecules the same way.

The exported checkpoint holds the head unfolded (`to_linear`: one row per source, w_{q(t)}
and b_{q(t)} + o_t), so every reader of the checkpoint format sees an ordinary linear head.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import nn


def groups_of(quantity_of: Sequence[Optional[str]]) -> list[int]:
    """Group index per task: tasks of one quantity share one, every other task has its own;
    groups numbered in order of first appearance."""
    index: dict = {}
    groups = []
    for t, q in enumerate(quantity_of):
        key = ("q", q) if q is not None else ("t", t)
        groups.append(index.setdefault(key, len(index)))
    return groups


class QuantityHead(nn.Module):
    """``forward(x [B, W]) -> [B, T]``: z_t = w_{g(t)} . x + b_{g(t)} + o_t (module docstring)."""

    def __init__(self, in_features: int, groups: Sequence[int]):
        super().__init__()
        group = torch.as_tensor(list(groups), dtype=torch.long)
        if group.numel() == 0 or int(group.min()) < 0:
            raise ValueError("a quantity head needs one non-negative group index per task")
        self.shared = nn.Linear(in_features, int(group.max()) + 1)
        self.offset = nn.Parameter(torch.zeros(group.numel()))
        self.register_buffer("group", group)

    @property
    def out_features(self) -> int:
        return self.group.numel()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shared(x).index_select(-1, self.group) + self.offset

    @classmethod
    def from_linear(cls, linear: nn.Linear, groups: Sequence[int]) -> "QuantityHead":
        """A head whose group starts from the mean of its tasks' rows of ``linear`` (a fresh
        head, or a warm-started run's endpoint head), offsets at zero."""
        head = cls(linear.in_features, groups)
        if linear.out_features != head.out_features:
            raise ValueError(f"{linear.out_features} head outputs for {head.out_features} tasks")
        with torch.no_grad():
            counts = torch.bincount(head.group, minlength=head.shared.out_features).clamp_min(1)
            weight = torch.zeros_like(head.shared.weight).index_add_(0, head.group, linear.weight)
            bias = torch.zeros_like(head.shared.bias).index_add_(0, head.group, linear.bias)
            head.shared.weight.copy_(weight / counts.unsqueeze(1))
            head.shared.bias.copy_(bias / counts)
        return head.to(linear.weight.device)

    @torch.no_grad()
    def to_linear(self) -> nn.Linear:
        """The same map as an ordinary ``nn.Linear(W, T)``: what checkpoints store."""
        out = nn.Linear(self.shared.in_features, self.out_features)
        out.weight.copy_(self.shared.weight.index_select(0, self.group))
        out.bias.copy_(self.shared.bias.index_select(0, self.group) + self.offset)
        return out


def exported_state(model: nn.Module) -> dict:
    """``model``'s state dict with a `QuantityHead` unfolded into ``head.weight``/``head.bias``
    (the checkpoint format's linear head); any other model's as it is."""
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    head = getattr(model, "head", None)
    if isinstance(head, QuantityHead):
        state = {k: v for k, v in state.items() if not k.startswith("head.")}
        linear = head.to_linear()
        state["head.weight"], state["head.bias"] = linear.weight.cpu(), linear.bias.cpu()
    return state
