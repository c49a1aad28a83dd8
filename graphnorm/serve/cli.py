"""``graphnorm serve``: arguments and command (cli.py wires them; torch and FastAPI load on
run only). The model is loaded once, before the server accepts requests."""
from __future__ import annotations

import argparse
import sys

from graphnorm.inference.cli import CHECKPOINT_HELP


def add_serve_args(p: argparse.ArgumentParser) -> None:
    from graphnorm.explain.cli import DEFAULT_METHOD, METHOD_CHOICES
    from graphnorm.serve.limits import Limits

    lim = Limits()
    p.add_argument("--checkpoint", nargs="+", help=CHECKPOINT_HELP)
    p.add_argument("--admet", metavar="FOLDER", help="also (or only) serve the ADMET panel of a "
                   "pre-trained model: best.ckpt + panel.json (`graphnorm panel build`), "
                   "at /admet")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (0.0.0.0: every interface; there is no login)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--method", choices=METHOD_CHOICES, default=DEFAULT_METHOD,
                   help="attribution method of the drawings (the model's and the panel's)")
    p.add_argument("--max-smiles", dest="max_smiles", type=int, default=lim.max_smiles,
                   help="SMILES per request (more: HTTP 413)")
    p.add_argument("--max-upload-mb", dest="max_upload_mb", type=float,
                   default=lim.max_upload_bytes / 2**20, help="request body / upload size in MiB")
    p.add_argument("--max-atoms", dest="max_atoms", type=int, default=lim.max_atoms,
                   help="heavy atoms per molecule (more: that row's error)")
    p.add_argument("--max-drawn", dest="max_drawn", type=int, default=lim.max_drawn,
                   help="molecules drawn per /draw request")
    p.add_argument("--body-seconds", dest="body_seconds", type=int, default=lim.body_seconds,
                   help="seconds a request body may take to arrive (slower: HTTP 408)")
    p.add_argument("--slice-rows", dest="slice_rows", type=int, default=64,
                   help="molecules per turn on the model: a small request waits for at most "
                        "about one slice of a large one")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")


def run_serve(args: argparse.Namespace) -> int:
    import torch
    import uvicorn

    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.app import create_app
    from graphnorm.serve.limits import Limits
    from graphnorm.serve.service import PredictionService

    if not args.checkpoint and not args.admet:
        raise ValueError("give --checkpoint (a trained model), --admet (an ADMET panel), or both")
    torch.set_num_threads(max(1, args.threads))
    limits = Limits(max_smiles=args.max_smiles, max_upload_bytes=int(args.max_upload_mb * 2**20),
                    max_atoms=args.max_atoms, max_drawn=args.max_drawn,
                    body_seconds=args.body_seconds)
    service = panel = None
    url = f"http://{args.host}:{args.port}"
    if args.checkpoint:
        predictor = load_predictor(args.checkpoint, batch_size=args.batch_size)
        service = PredictionService(predictor, limits, args.method, slice_rows=args.slice_rows)
        models = len(predictor.members)
        print(f"[graphnorm] serving {models} model{'s' if models > 1 else ''} "
              f"({', '.join(predictor.loaded.targets)}) on {url}/ "
              "(JSON API: POST /predict, /upload, /draw; docs at /docs)", file=sys.stderr, flush=True)
    if args.admet:
        from graphnorm.inference.admet_panel import AdmetPanel
        from graphnorm.serve.panel_service import PanelService

        panel = PanelService(AdmetPanel.load(args.admet, batch_size=args.batch_size), limits,
                             args.slice_rows, service.scheduler if service else None, args.method)
        print(f"[graphnorm] serving the ADMET panel of {args.admet} ({len(panel.panel.entries)} "
              f"endpoints) on {url}/admet (JSON API: POST /admet/predict, /admet/draw)",
              file=sys.stderr, flush=True)
    uvicorn.run(create_app(service, panel), host=args.host, port=args.port, log_level="warning",
                timeout_keep_alive=5)
    return 0
