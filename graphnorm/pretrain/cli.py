"""``graphnorm pretrain``: arguments and command (graphnorm/cli/ wires them; torch loads on
run only).

A run folder's files are `folder`'s (the spec, ``last.ckpt`` to resume, the cost curve,
``best.ckpt`` for ``train --init-from``, data.json, metrics.json); the training is
`fit.train`, the package's one training stack.
Calling it again on the same ``--out`` continues the run for another ``--max-time``.
What is done with a trained run are commands of their own: ``graphnorm pretrain curve`` and
``step-cost`` (here), ``graphnorm panel build | readouts | versus-gbm | compare | card |
ship`` (graphnorm/cli/panel.py).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Optional

from .spec import FLAG_FIELDS, PretrainSpec


def _duration(text: str) -> float:
    """'90m', '2h40m', '45s', '01:30:00' (train's `parse_duration`) or plain seconds -> seconds."""
    from graphnorm.train.config_keys import parse_duration

    try:
        return float(text) if text.replace(".", "", 1).isdigit() else parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 90m, 2h40m, "
                                         "01:30:00)") from err


# what a spec flag means where its name does not say it
FLAG_HELP = {
    "val_percent": "percent of the Murcko-scaffold groups held out to score and choose on; 0 "
                   "trains every row (the refit once the choices are made: no held-out score) ",
    "targets": "endpoints: one output per corpus endpoint; quantities: one per quantity of the "
               "shared map, an offset per source ",
    "sampling": "uniform: each epoch a permutation; task: square-root task-balanced draws ",
    "weighting": "molecule: each molecule weighs one, shared among its labels; label: every "
                 "label weighs one ",
}


def add_pretrain_args(p: argparse.ArgumentParser) -> None:
    default = PretrainSpec()
    p.add_argument("--out", help="run folder: created, or continued when it "
                   "holds a run of the same settings")
    p.add_argument("--raw-dir", help="folder holding admet_corpus/ (default: $GRAPHNORM_RAW_DIR)")
    p.add_argument("--tdc-dir", help="the TDC ADMET group, whose molecules are left out "
                   "(default: $GRAPHNORM_RAW_DIR/tdc_admet_group)")
    p.add_argument("--max-time", type=_duration, default=_duration("60m"),
                   help="wall budget of this call, e.g. 90m, 2h (default: 60m)")
    p.add_argument("--max-steps", type=int, help="stop at this many optimizer steps in all")
    p.add_argument("--patience", type=int, metavar="K", help="stop once the held-out loss "
                   "has not beaten its best for K evaluations in a row, counted across calls "
                   "(best.ckpt stays the best model; default: no such stop)")
    p.add_argument("--eval-every", type=int, default=500, help="steps between held-out scores "
                   "and checkpoints (default: 500)")
    p.add_argument("--probe-every", type=int, default=1, help="probe the held-out tasks at "
                   "every K-th evaluation only (they cost more than the held-out molecules; "
                   "default: 1)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    p.add_argument("--workers", type=int, default=1, help="featurizing processes, first call")
    p.add_argument("--device", default="cpu", help="where the model trains: cpu (default) or "
                   "a torch device such as cuda; states and checkpoints load on any")
    p.add_argument("--loader-workers", dest="loader_workers", type=int, default=0,
                   help="processes making the training batches (what keeps a GPU fed; "
                   "default 0: this process)")
    p.add_argument("--corpora", help="comma-separated corpus folders (default: all)")
    p.add_argument("--leave-out", dest="leave_out", metavar="TASKS", help="comma-separated "
                   "corpus tasks (<corpus>/<column>) whose labels the run never reads: the "
                   "leave-source-out yardstick (default: none)")
    p.add_argument("--keep-tdc", action="store_true", help="keep TDC ADMET molecules in the "
                   "corpus (then no choice may be made on TDC validation splits with it)")
    p.add_argument("--with-tdc-tables", dest="tdc_tables", action="store_true",
                   help="the product build: the 22 TDC ADMET tables, test rows too, join the "
                   "corpus (needs --keep-tdc; never a TDC entry nor a `train` start)")
    p.add_argument("--descriptors", choices=("fast", "rdkit2d"), help="RDKit descriptors at "
                   "the head (fast: RDKit's C++ set, ~2 ms per molecule); the corpus is "
                   "featurized again with them (default: none)")
    p.add_argument("--train-every-task", dest="train_every_task", action="store_true",
                   help="hold out no task for the probe: every endpoint gets a trained head "
                   "(the shipped model; the probe score is then not measured)")
    p.add_argument("--init-from", dest="init_from", metavar="CKPT", help="warm start: begin "
                   "from this checkpoint's weights (a best.ckpt, a run folder, or the shipped "
                   "'admet'; same model and featurizer), the learning-rate schedule going on "
                   "from the steps it was trained; refused when it may have seen a TDC molecule "
                   "and this run leaves them out")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    for name in FLAG_FIELDS:
        value = getattr(default, name)
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), dest=name,
                       help=f"{FLAG_HELP.get(name, '')}(default: {value})")


def add_pretrain_modes(p: argparse.ArgumentParser) -> None:
    """``graphnorm pretrain curve RUN ...`` and ``graphnorm pretrain step-cost NORMS``: each
    its own flags (without one, ``graphnorm pretrain`` trains)."""
    modes = p.add_subparsers(dest="mode", metavar="{curve,step-cost}",
                             help="instead of training (each has its own --help)")
    c = modes.add_parser("curve", help="the cost curve of pre-training runs: held-out scores "
                         "against CPU-hours (curve.md, curve.png)")
    c.add_argument("runs", nargs="+", metavar="RUN", help="run folders")
    c.add_argument("--out", required=True, help="where curve.md and curve.png go")
    c.add_argument("--cost-file", dest="cost_file", metavar="STEP_COST_JSON", help="put the "
                   "runs on the clock of a step-cost measurement (steps x measured CPU-s per "
                   "step) instead of their logged CPU time")
    s = modes.add_parser("step-cost", help="CPU-seconds per step of the model with each of "
                         "these norms, or norms at sizes (sep:bn+bn@6x96: 6 layers, width 96, "
                         "FFN 192), or with the head's descriptors (sep:bn+bn/fast, /rdkit2d, "
                         "/none), measured side by side; written to --out/step_cost.json")
    s.add_argument("norms", metavar="NORM[@LxH][/DESC],...")
    s.add_argument("--out", required=True)
    s.add_argument("--raw-dir", help="folder holding admet_corpus/ (default: $GRAPHNORM_RAW_DIR)")
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--corpora", help="comma-separated corpus folders (default: all)")
    default = PretrainSpec()
    for name in ("num_layers", "hidden", "ffn_hidden", "batch_size"):
        s.add_argument(f"--{name.replace('_', '-')}", type=int, dest=name,
                       help=f"(default: {getattr(default, name)})")


def spec_from_args(args: argparse.Namespace) -> PretrainSpec:
    values = {k: getattr(args, k) for k in FLAG_FIELDS if getattr(args, k, None) is not None}
    if args.corpora:
        values["corpora"] = tuple(c.strip() for c in args.corpora.split(",") if c.strip())
    if getattr(args, "leave_out", None):
        values["leave_out"] = tuple(t.strip() for t in args.leave_out.split(",") if t.strip())
    if getattr(args, "descriptors", None):
        from graphnorm.chem.descriptors import descriptor_set

        values["descriptors"] = descriptor_set(args.descriptors)
    values["exclude_tdc"] = not getattr(args, "keep_tdc", False)
    values["held_out_tasks"] = not getattr(args, "train_every_task", False)
    values["tdc_tables"] = getattr(args, "tdc_tables", False)
    if getattr(args, "init_from", None):
        values["init_from"] = args.init_from
        values["schedule_offset"] = _steps_trained(args.init_from)
    return PretrainSpec(**values)


def _steps_trained(path: str) -> int:
    """The schedule's step where checkpoint ``path`` stopped (`init_from.pretrain_steps`): a
    warm start goes on from there."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.pretrained import resolve_init_from
    from graphnorm.train.init_from import pretrain_steps

    loaded = load_checkpoint(resolve_init_from(path))
    steps = pretrain_steps(loaded)
    if steps is None:
        raise ValueError(f"--init-from {path} ({loaded.path}) is not a pre-training checkpoint; "
                         "a warm start continues a `graphnorm pretrain` run's backbone")
    return steps


def run_pretrain(args: argparse.Namespace) -> int:
    import torch

    from .fit import train
    from .folder import SPEC_FILE
    from .setup import PretrainRun

    torch.set_num_threads(max(1, args.threads))
    if args.mode == "curve":
        from .report import write_report

        written = write_report([Path(r) for r in args.runs], Path(args.out), args.cost_file)
        print(f"[graphnorm pretrain] wrote {written['table']} and {written['figure']}")
        return 0
    if args.mode == "step-cost":
        return _step_cost(args, spec_from_args(args), Path(args.out))
    if not args.out:
        raise ValueError("--out RUN is required: the run folder to create or continue")
    out = Path(args.out)
    spec = spec_from_args(args)
    spec_path = out / SPEC_FILE
    if spec_path.is_file():  # a resumed run is the same run: a flag may only repeat it
        before = PretrainSpec.from_dict(json.loads(spec_path.read_text()))
        saved, asked = before.to_dict(), spec.to_dict()
        given = [k for k in FLAG_FIELDS if getattr(args, k) is not None]
        given += (["corpora"] if args.corpora else []) + (["exclude_tdc"] if args.keep_tdc else [])
        given += ["held_out_tasks"] if args.train_every_task else []
        given += ["descriptors"] if args.descriptors else []
        given += ["init_from", "schedule_offset"] if args.init_from else []
        given += ["tdc_tables"] if args.tdc_tables else []
        given += ["leave_out"] if args.leave_out else []
        diff = {k: (saved[k], asked[k]) for k in given if saved[k] != asked[k]}
        if diff:
            raise ValueError(f"{out} holds a run with other settings (run, asked): {diff}; "
                             "continue it without those flags, or pick a new --out")
        spec = before
    _check_device(args.device, args.loader_workers)
    if args.patience is not None and (args.patience < 1 or not spec.val_percent):
        raise ValueError(f"--patience {args.patience}: needs K >= 1 and held-out molecules to "
                         f"judge by (this run holds out {spec.val_percent} %)")
    progress = not args.quiet
    from .setup import recorded_quantity_map

    run = PretrainRun(spec, args.raw_dir, workers=args.workers, progress=progress,
                      tdc_dir=args.tdc_dir, quantity_map=recorded_quantity_map(out))
    out.mkdir(parents=True, exist_ok=True)
    if not spec_path.is_file():
        run.write_records(out)
    last = train(run, out, args.max_time, args.max_steps, args.eval_every, progress,
                 args.probe_every, args.device, args.loader_workers, args.patience)
    if progress:
        print(f"[graphnorm pretrain] {stop_message(last, out, args.patience)}", flush=True)
    return 0


def stop_message(last: dict, out: Path, patience: Optional[int]) -> str:
    """What the user is told when a call ends: done (patience, --max-steps) or to be continued."""
    from .folder import BEST_FILE

    at = f"stopped at step {last['stopped_at']}"
    if last["stopped_by"] == "patience":
        return (f"{at}: the held-out loss has not beaten its best for {patience} evaluations; "
                f"the model is {out / BEST_FILE}")
    if last["stopped_by"] == "max_steps":
        return f"{at}: --max-steps reached, the run is complete; the model is {out / BEST_FILE}"
    return f"{at}; continue with the same command (state in {out})"


def open_run(folder, raw_dir=None, tdc_dir=None, workers: int = 1, progress: bool = True):
    """The `PretrainRun` of a trained run folder, built from its ``pretrain.json`` (what the
    panel commands score); FileNotFoundError naming a folder that holds no run."""
    from .folder import SPEC_FILE, check_trained
    from .setup import PretrainRun, recorded_quantity_map

    folder = check_trained(folder)
    spec = PretrainSpec.from_dict(json.loads((folder / SPEC_FILE).read_text()))
    return PretrainRun(spec, raw_dir, workers=workers, progress=progress, tdc_dir=tdc_dir,
                       quantity_map=recorded_quantity_map(folder))


def _check_device(device: str, loader_workers: int) -> None:
    """A device this machine has, named before the corpus loads (minutes on a CPU)."""
    import torch

    if loader_workers < 0:
        raise ValueError(f"--loader-workers must be >= 0, got {loader_workers}")
    try:
        kind = torch.device(device).type
    except RuntimeError as err:
        raise ValueError(f"--device {device!r} is not a torch device (cpu, cuda, cuda:1, ...)") from err
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {device}: this machine has no CUDA GPU that torch "
                         f"{torch.__version__} can use; train on the CPU (--device cpu)")


def _step_cost(args, spec: PretrainSpec, out: Path) -> int:
    import platform

    from .corpus import load_corpus
    from .step_cost import model_specs, sample_smiles, step_costs

    labels = [n.strip() for n in args.norms.split(",") if n.strip()]
    specs = model_specs(spec, labels)  # a malformed size fails before the corpus loads
    smiles = sample_smiles(load_corpus(args.raw_dir, spec.corpora), 4 * spec.batch_size)
    costs = step_costs(specs, smiles, max(1, args.threads))
    record = {"cpu_s_per_step": costs, "size": [spec.num_layers, spec.hidden, spec.ffn_hidden],
              "batch_size": spec.batch_size, "threads": args.threads,
              "load_average": list(os.getloadavg()), "machine": platform.processor() or platform.machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "step_cost.json").write_text(json.dumps(record, indent=2) + "\n")
    for norm, cost in costs.items():
        print(f"{norm:>12}: {cost:.3f} CPU-s per step ({spec.batch_size / cost:.0f} mol per CPU-s)")
    return 0
