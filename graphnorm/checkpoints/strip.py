"""A checkpoint stripped to what prediction and ``--init-from`` read: the model's weights, its
``graphnorm`` block and epoch, in the current format, without optimizer state (how a
backbone is shipped as package data, `graphnorm.pretrained`). ``half``: floating-point
weights stored in float16, half the bytes; loading casts them back to the model's float32
(``load_state_dict`` copies into the parameters), so only the stored values are rounded."""
from __future__ import annotations

from pathlib import Path

from .format import CheckpointError, upgrade_checkpoint
from .reader import checkpoint_files


def strip_checkpoint(source: str | Path, dest: str | Path, half: bool = False) -> Path:
    """Write ``source``'s (a checkpoint or a run folder of one) model weights and
    ``graphnorm`` block (and its epoch) to ``dest``, in the current checkpoint format;
    ``half``: floating-point weights as float16 (module docstring)."""
    import torch

    from graphnorm.models import build_model

    files = checkpoint_files(source)
    if len(files) != 1:
        raise CheckpointError(f"{source}: expected one checkpoint, found {len(files)}")
    ckpt = torch.load(files[0], map_location="cpu", weights_only=True)
    upgrade_checkpoint(ckpt, build_model(ckpt["graphnorm"]["model_config"]))
    state = {k: v.half() if half and v.is_floating_point() else v
             for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
    dest = Path(dest)
    torch.save({"state_dict": state, "graphnorm": ckpt["graphnorm"], "epoch": ckpt.get("epoch", -1)},
               dest)
    return dest
