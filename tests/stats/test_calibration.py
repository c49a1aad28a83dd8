"""Split-conformal intervals and probability calibration (graphnorm/stats/calibration.py), and
the ensemble's combined validation predictions they are fitted on."""
import math

import numpy as np
import pandas as pd
import pytest

from graphnorm.ensemble import Ensemble
from graphnorm.stats.calibration import (ProbabilityCalibrator, conformal_quantile, coverage,
                                         expected_calibration_error, interval_halfwidths)


def validation_predictions(files):
    return Ensemble.of_files(files).combined_predictions("val")


def test_quantile_is_the_finite_sample_rank():
    r = np.arange(1, 20, dtype=float)  # n = 19: ceil(20 * 0.9) = 18th smallest
    assert conformal_quantile(r, 0.9) == 18.0
    assert conformal_quantile(np.arange(1, 5, dtype=float), 0.9) == math.inf  # too few
    with pytest.raises(ValueError, match="level"):
        conformal_quantile(r, 90)


def test_coverage_holds_on_exchangeable_data():
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(200):
        val, test = rng.standard_t(3, 100), rng.standard_t(3, 100)
        q = conformal_quantile(np.abs(val), 0.9)
        hits.append(coverage(-q * np.ones(100), q * np.ones(100), test))
    assert 0.88 < np.mean(hits) < 0.93  # >= 0.9 on average, < 0.9 + 1/(n+1)


def _write_val(run, smiles, y, pred):
    run.mkdir(parents=True)
    pd.DataFrame({"smiles": smiles, "y:t": y, "pred:t": pred}).to_csv(run / "predictions_val.csv.gz", index=False)
    return run / "best.ckpt"


def test_ensemble_members_are_averaged_and_must_share_a_split(tmp_path):
    a = _write_val(tmp_path / "a", ["C", "CC"], [1.0, 2.0], [0.0, 2.0])
    b = _write_val(tmp_path / "b", ["C", "CC"], [1.0, 2.0], [1.0, 3.0])
    val = validation_predictions([a, b])
    assert val["pred:t"].tolist() == [0.5, 2.5]
    assert interval_halfwidths(val, 0.5) == {"t": 0.5}
    c = _write_val(tmp_path / "c", ["C", "CCC"], [1.0, 2.0], [1.0, 3.0])
    with pytest.raises(ValueError, match="other molecules"):
        validation_predictions([a, c])
    with pytest.raises(FileNotFoundError, match="no validation predictions"):
        validation_predictions([tmp_path / "none" / "best.ckpt"])


def test_calibration_reduces_ece_of_overconfident_probabilities():
    rng = np.random.default_rng(1)
    true_p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < true_p).astype(float)
    logit = np.log(true_p / (1 - true_p))
    over = 1 / (1 + np.exp(-3 * logit))  # too confident
    assert expected_calibration_error(true_p, y) < 0.03
    before = expected_calibration_error(over[2000:], y[2000:])
    for method in ("platt", "isotonic"):
        cal = ProbabilityCalibrator(method).fit(over[:2000], y[:2000])
        after = expected_calibration_error(cal.transform(over[2000:]), y[2000:])
        assert after < before / 2, (method, before, after)
    with pytest.raises(ValueError, match="both classes"):
        ProbabilityCalibrator("platt").fit(np.array([0.2, 0.3]), np.array([1.0, 1.0]))


def test_too_small_a_validation_split_is_refused_by_name(tmp_path):
    from graphnorm.ensemble import Ensemble
    from graphnorm.inference.predict import Predictor

    ckpt = _write_val(tmp_path / "r", ["C", "CC", "CCC"], [1.0, 2.0, 3.0], [1.0, 2.0, 3.5])
    member = type("M", (), {"path": ckpt})()
    fake = Predictor.__new__(Predictor)
    fake.members, fake.ensemble = [member], Ensemble.of_files([ckpt])
    fake.loaded = type("L", (), {"task": {"task_type": "regression"}, "targets": ["t"]})()
    with pytest.raises(ValueError, match="0.9 interval for t needs at least 9 labelled "
                                         "validation molecules; the run has 3"):
        fake.add_intervals(pd.DataFrame({"smiles": ["C"], "prediction": [1.0]}), 0.9)


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_a_chunk_of_failed_rows_calibrates_to_nan(method):
    """predict calibrates chunk by chunk: a chunk whose rows all failed (NaN) stays NaN."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50).astype(float)
    cal = ProbabilityCalibrator(method).fit(np.clip(0.5 * y + 0.3 * rng.random(50), 0, 1), y)
    assert np.isnan(cal.transform(np.array([np.nan, np.nan]))).all()
    assert cal.transform(np.array([])).shape == (0,)
