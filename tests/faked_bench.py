"""A benchmark run faked by writing the metrics.json and predictions a real run writes; the
``faked`` benchmark of three seeds that the summary, plot and pairing tests read is
tests/bench/conftest.py's."""
import json
from pathlib import Path

import numpy as np
import pandas as pd


def _fake_train(cfg) -> None:
    """Stands in for a training run: writes the metrics.json a real run writes."""
    test = 0.5 + 0.1 * cfg.seed + (0.05 if cfg.norm == "ln" else 0.0)
    result = {"dataset": cfg.dataset, "norm": cfg.norm, "seed": cfg.seed, "metric": "mae",
              "val_mae": test - 0.02, "test_mae": test, "best_epoch": 3, "epochs": 3,
              "steps": 30, "wall_time_s": 12.5, "budget_s": None, "model": cfg.model_name,
              "params": 1234, "train_graphs_per_s": 100.0, "hardware": "cpu",
              "git_sha": "abc", "data_checksum": "0" * 64, "config": cfg.to_dict()}
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    (Path(cfg.out) / "metrics.json").write_text(json.dumps(result))
    # predictions whose errors cancel over seeds 0-2: offsets -0.3, 0, +0.3 (a gine run's
    # are the opposite, so a Graphormer + gine pair cancels on every seed)
    y = np.array([0.0, 1.0, 2.0, 3.0])
    sign = -1.0 if cfg.model_name == "gine" else 1.0
    pd.DataFrame({"smiles": ["C", "CC", "CCC", "CCCC"], "y:target": y,
                  "pred:target": y + sign * 0.3 * (cfg.seed - 1)}).to_csv(
        Path(cfg.out) / "predictions_test.csv.gz", index=False)
