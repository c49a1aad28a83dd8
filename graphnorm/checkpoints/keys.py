"""State-dict keys of the layouts before the shared transformer core, and their upgrade.

The one home of the old key names: the Graphormer, text encoder and ViT once held their
blocks as ``blocks`` (ViT's final norm as ``norm``; text's ``emb_norm``), and each block had
its own names (Graphormer ``qkv``/``out``/``ffn1``/``ffn2``, text/ViT ``norm1``/``norm2``/
``mlp.0``/``mlp.2``, ViT ``attn.proj``). `upgrade_keys` renames a state dict of any of
these layouts to today's, walking the model from its root so that renames compose (the
Graphormer moves ``blocks.*`` under ``transformer.``; each block then renames its own
``qkv`` to ``attn.qkv``). Keys already in today's layout are left alone, so it is safe on
any state dict. The model classes know nothing of their old names.
"""
from __future__ import annotations

from typing import Mapping

# model class name -> {old submodule path: new path}
LEGACY_KEYS: dict[str, dict[str, str]] = {
    "TransformerBlock": {
        "norm1": "attn_norm", "norm2": "ffn_norm",  # text, ViT
        "qkv": "attn.qkv", "out": "attn.out",  # Graphormer
        "attn.proj": "attn.out",  # ViT
        "ffn1": "ffn.fc1", "ffn2": "ffn.fc2",  # Graphormer
        "mlp.0": "ffn.fc1", "mlp.2": "ffn.fc2",  # text, ViT
    },
    "Graphormer": {"blocks": "transformer.blocks", "final_norm": "transformer.final_norm"},
    "TextEncoder": {name: f"transformer.{name}" for name in ("emb_norm", "blocks", "final_norm")},
    "VisionTransformer": {"blocks": "transformer.blocks", "norm": "transformer.final_norm"},
}


def rename_keys(state_dict: dict, prefix: str, renames: Mapping[str, str]) -> None:
    """In place: every key ``prefix + old + rest`` becomes ``prefix + new + rest``.

    ``old`` names a whole path component or dotted path (``"norm"`` matches ``norm.weight``,
    not ``norm1.weight``). Keys already in the new layout are left alone.
    """
    for key in [k for k in state_dict if k.startswith(prefix)]:
        local = key[len(prefix):]
        for old, new in renames.items():
            if local == old or local.startswith(old + "."):
                state_dict[prefix + new + local[len(old):]] = state_dict.pop(key)
                break


def _renames(module) -> dict[str, str]:
    for cls in type(module).__mro__:
        if cls.__name__ in LEGACY_KEYS:
            return LEGACY_KEYS[cls.__name__]
    return {}


def upgrade_keys(model, state_dict: dict, prefix: str = "") -> dict:
    """``state_dict`` (keys under ``prefix``, e.g. ``"model."`` in a Lightning checkpoint)
    renamed in place to ``model``'s layout; returned for chaining."""
    for name, module in model.named_modules():  # parents first: children see new names
        renames = _renames(module)
        if renames:
            rename_keys(state_dict, prefix + (name + "." if name else ""), renames)
    return state_dict
