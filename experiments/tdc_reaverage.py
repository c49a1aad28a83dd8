"""A board of the admet default's runs, its ensembles evaluated again by today's code: what
``benchmark --recipe admet`` computes for the same trained members, without training them.

For a change that touches only how the members are combined (session 32: the mean log-odds
on classification, ``graphnorm.tasks.averaging``), the members a rerun would train are the
ones on disk: the Graphormer and the tree model do not read the ensemble's settings. Each run
folder ``<task>/runs/<variant>/seed<k>/`` of ``--from`` becomes one under ``--out``: its own
small files copied, its members' files linked (never written: every member is finished), and
``graphnorm.train.ensemble.train_ensemble`` run on it with the recipe's settings of today
(``--set member_average=logodds``; else the run's own config), which writes ``ensemble.json``,
``metrics.json`` and the ensemble's prediction files there. CPU-s stay the members' own.

    python experiments/tdc_reaverage.py --from experiments/results/tdc_admet/board31 \\
        --out experiments/results/tdc_admet/board32 --set member_average=logodds
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from graphnorm.run_folder import ENSEMBLE_FILE


def link_run(src: Path, dst: Path) -> None:
    """dst: src's top-level files copied (the ensemble rewrites them), member folders'
    files linked (read only)."""
    dst.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_file():
            shutil.copyfile(item, dst / item.name)
        elif item.is_dir():
            (dst / item.name).mkdir(exist_ok=True)
            for f in item.rglob("*"):
                target = dst / item.name / f.relative_to(item)
                if f.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                elif not target.exists():
                    target.symlink_to(f.resolve())


def reaverage(run: Path, out: Path, settings: dict) -> dict:
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.ensemble import train_ensemble

    config = json.loads((run / ENSEMBLE_FILE).read_text())["config"]
    link_run(run, out)
    cfg = TrainConfig.from_dict({**config, **settings, "out": str(out)})
    return train_ensemble(cfg)


def _setting(text: str) -> tuple[str, object]:
    key, _, value = text.partition("=")
    if not key or not _:
        raise argparse.ArgumentTypeError(f"--set {text!r}: use FIELD=VALUE")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="src", type=Path, required=True, help="a board folder")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tasks", help="comma-separated; default every task with finished runs")
    p.add_argument("--set", dest="settings", type=_setting, action="append", default=[],
                   metavar="FIELD=VALUE", help="a TrainConfig field for the ensemble")
    args = p.parse_args(argv)
    tasks = set(args.tasks.split(",")) if args.tasks else None
    runs = [r.parent for r in sorted(args.src.glob(f"*/runs/*/seed*/{ENSEMBLE_FILE}"))
            if tasks is None or r.parents[3].name in tasks]
    if not runs:
        raise SystemExit(f"no finished ensemble runs under {args.src}")
    for run in runs:
        reaverage(run, args.out / run.relative_to(args.src), dict(args.settings))
    print(f"{len(runs)} runs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
