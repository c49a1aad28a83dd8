"""The files of a pre-training run folder (torch-free: the panel commands name them too).

- ``pretrain.json``: the spec, written on the first call; a resumed run must repeat it;
- ``data.json``: corpus checksum and sources, split sizes, held-out tasks, the quantity map;
- ``last.ckpt``: Lightning's checkpoint of the last step a call trained, what the next call
  resumes from (graphnorm/pretrain/fit.py);
- ``best.ckpt``: the model of the best held-out loss, as a graphnorm checkpoint (what
  ``train --init-from`` and the panel commands read);
- ``log.jsonl``: one record per evaluation, the cost curve (held-out scores against CPU-hours);
- ``metrics.json``: the run record every training run writes (`graphnorm.run_folder`).
"""
import json
from pathlib import Path

from graphnorm.run_folder import LAST_CHECKPOINT

SPEC_FILE, DATA_FILE, LOG_FILE, BEST_FILE = "pretrain.json", "data.json", "log.jsonl", "best.ckpt"
STATE_FILE = LAST_CHECKPOINT
# what the loop before the one training stack saved instead of last.ckpt (named in a refusal)
OLD_STATE_FILE = "state.pt"


def check_trained(folder) -> Path:
    """``folder``, once it holds a trained run's spec and model; else a FileNotFoundError
    naming the folder and the file it lacks."""
    folder = Path(folder)
    for name in (SPEC_FILE, BEST_FILE):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder}: not a trained pre-training run (no {name}; "
                                    "`graphnorm pretrain --out RUN` trains one)")
    return folder


def read_log(folder) -> list[dict]:
    """The evaluations in ``folder``'s log.jsonl, in order ([] without one)."""
    path = Path(folder) / LOG_FILE
    return [json.loads(line) for line in path.read_text().splitlines() if line] \
        if path.is_file() else []


def best_evaluation(log: list[dict]) -> dict:
    """The evaluation of the lowest held-out loss, the one best.ckpt holds (`held_out.py`),
    not the last; {} when none was scored."""
    scored = [r for r in log if r.get("val_loss") is not None]
    return min(scored, key=lambda r: r["val_loss"]) if scored else {}
