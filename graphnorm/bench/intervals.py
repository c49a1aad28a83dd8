"""The benchmark's check of the conformal intervals' promise: test coverage and width of
finished runs' intervals, each fitted on its own validation predictions
(`graphnorm.stats.calibration`); ECE before and after Platt scaling for binary targets."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np


def run_interval_report(run_dirs: Sequence[Path], level: float = 0.9) -> dict:
    """Test coverage and mean width of the conformal interval of finished runs (each fitted
    on its own validation predictions), per target: the check of `conformal_quantile`'s
    promise on held-out molecules. Binary targets report ECE before/after Platt instead."""
    import pandas as pd

    from graphnorm.ensemble import Ensemble
    from graphnorm.run_folder import BEST_CHECKPOINT, predictions_file, read_metrics
    from graphnorm.stats.calibration import (ProbabilityCalibrator, coverage,
                                             expected_calibration_error, interval_halfwidths)
    from graphnorm.tasks import task_scored_by

    per_run = []
    for run in run_dirs:
        val = Ensemble.of_files([Path(run) / BEST_CHECKPOINT]).combined_predictions("val")
        test = pd.read_csv(Path(run) / predictions_file("test"))
        binary = task_scored_by(read_metrics(run)["metric"]).binary
        row = {"run": str(run)}
        for col in (c for c in val.columns if c.startswith("y:")):
            name = col[2:]
            y, p = test[col].to_numpy(float), test[f"pred:{name}"].to_numpy(float)
            if binary:
                cal = ProbabilityCalibrator("platt").fit(val[f"pred:{name}"].to_numpy(float),
                                                          val[col].to_numpy(float))
                row[name] = {"ece": expected_calibration_error(p, y),
                             "ece_platt": expected_calibration_error(cal.transform(p), y)}
                continue
            q = interval_halfwidths(val[["smiles", col, f"pred:{name}"]], level)[name]
            row[name] = {"coverage": coverage(p - q, p + q, y), "width": 2 * q,
                         "n_test": int((~np.isnan(y)).sum())}
        per_run.append(row)
    return {"level": level, "runs": per_run}
