"""The cost curve of pre-training runs: held-out scores against CPU-hours, as a table and
one figure (``graphnorm pretrain curve RUN [RUN ...] --out DIR``).

Each run folder's ``log.jsonl`` (`held_out.py`) holds one record per evaluation; the CPU time is
the training process's own (``time.process_time``, all its threads, summed over sessions), so
runs on a shared machine compare by the work they did, not by the wall clock. A run's label
is its norm and size (``pretrain.json``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .folder import LOG_FILE, SPEC_FILE
from .step_cost import cost_of

PANELS = (("val_loss", "held-out molecules: loss (lower is better)"),
          ("val_auroc", "held-out molecules: mean ROC-AUC"),
          ("probe", "held-out tasks: linear probe (mean AUROC / R²)"))


class ReportError(ValueError):
    pass


def read_run(folder: Path, per_step: Optional[dict] = None) -> tuple[str, list[dict]]:
    """(label, log records) of a run folder; a clear error for a folder that is not one.
    ``per_step`` (a `step_cost.json` record, `step_cost.py`): each record also gets ``cost_h``,
    its steps at the run's side-by-side cost per step -- the clock runs of different
    sessions share (logged CPU time follows what ran beside them)."""
    folder = Path(folder)
    log, spec = folder / LOG_FILE, folder / SPEC_FILE
    if not log.is_file() or not spec.is_file():
        raise ReportError(f"{folder}: not a pre-training run (no {LOG_FILE} or {SPEC_FILE})")
    settings = json.loads(spec.read_text())
    label = (f"{settings['norm']} {settings['num_layers']}x{settings['hidden']} "
             f"({folder.name})")
    records = []
    for n, line in enumerate(log.read_text().splitlines(), 1):
        try:
            records.append(json.loads(line))
        except ValueError as err:
            raise ReportError(f"{log}:{n}: not a JSON record ({err})") from err
    if per_step is not None:
        cost = cost_of(settings, per_step)
        if cost is None:
            raise ReportError(f"the step costs measured ({', '.join(per_step['cpu_s_per_step'])}"
                              f") lack {settings['norm']} at {settings['num_layers']}x"
                              f"{settings['hidden']}x{settings['ffn_hidden']}, the model of "
                              f"{folder}")
        for r in records:
            r["cost_h"] = r["step"] * cost / 3600
    return label, records


def _fmt(value) -> str:
    return "" if value is None else f"{value:.4f}"


def curve_table(runs: dict[str, list[dict]]) -> str:
    """Markdown: per run and evaluation, CPU-hours, molecules seen, molecules per CPU-second
    and the held-out scores."""
    lines = ["| run | step | CPU-h logged | CPU-h at measured cost | molecules seen | "
             "mol / CPU-s | val loss | val AUROC | val R² | probe |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for label, records in runs.items():
        for r in records:
            rate = r["seen"] / r["cpu_s"] if r.get("cpu_s") else None
            cost = "" if r.get("cost_h") is None else f"{r['cost_h']:.2f}"
            lines.append(f"| {label} | {r['step']} | {r['cpu_s'] / 3600:.2f} | {cost} | {r['seen']:,} | "
                         f"{'' if rate is None else f'{rate:.0f}'} | {_fmt(r.get('val_loss'))} | "
                         f"{_fmt(r.get('val_auroc'))} | {_fmt(r.get('val_r2'))} | "
                         f"{_fmt(r.get('probe'))} |")
    return "\n".join(lines) + "\n"


def plot_curve(runs: dict[str, list[dict]], path: Path) -> Path:
    fig = Figure(figsize=(4 * len(PANELS), 3.2))
    FigureCanvasAgg(fig)
    for i, (key, title) in enumerate(PANELS):
        ax = fig.add_subplot(1, len(PANELS), i + 1)
        measured = all(r.get("cost_h") is not None for rs in runs.values() for r in rs)
        for label, records in runs.items():
            pts = [(r["cost_h"] if measured else r["cpu_s"] / 3600, r[key])
                   for r in records if r.get(key) is not None]
            if pts:
                ax.plot(*zip(*pts), marker="o", ms=3, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("CPU-hours (steps x measured cost per step)" if measured else
                      "CPU-hours (logged)")
        ax.grid(alpha=0.3)
    fig.axes[0].legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def write_report(folders: Sequence[Path], out: Path, step_cost: Optional[Path] = None) -> dict:
    """``out/curve.md`` and ``out/curve.png`` of the runs in ``folders``; with ``step_cost``
    (a `step_cost.json`), against steps x measured cost per step."""
    per_step = None
    if step_cost is not None:
        try:
            per_step = json.loads(Path(step_cost).read_text())
            per_step["cpu_s_per_step"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ReportError(f"{step_cost}: not a step_cost.json ({err})") from err
    runs = dict(read_run(Path(f), per_step) for f in folders)
    if not any(runs.values()):
        raise ReportError("no evaluation logged yet in " + ", ".join(map(str, folders)))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "curve.md").write_text(curve_table(runs))
    return {"table": out / "curve.md", "figure": plot_curve(runs, out / "curve.png")}
