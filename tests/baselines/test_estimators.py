"""The tree kinds as scikit-learn-style estimators (graphnorm/baselines/estimators.py): one
estimator per target on its labelled rows, a log10 target fitted in log units and predicted
in the user's, and the stored models predicting exactly as the fitted estimator did."""
import numpy as np
import pytest

from graphnorm.baselines.boosted import BoostedTarget, boosted_trees, fitted_boosters
from graphnorm.baselines.estimators import Log10Target, PerTarget
from graphnorm.baselines.forest import fitted_forests, random_forests
from graphnorm.chem.tabular import feature_matrix


class Mean:
    """A toy one-target estimator: the mean label."""

    def fit(self, X, y):
        self.model = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.model)


def test_per_target_fits_each_column_on_its_labelled_rows():
    X = np.zeros((4, 2))
    Y = np.array([[1.0, np.nan], [3.0, np.nan], [np.nan, np.nan], [5.0, np.nan]])
    model = PerTarget(lambda j: Mean()).fit(X, Y)
    assert model.models == [3.0, None]
    pred = model.predict(X[:2])
    assert pred[:, 0].tolist() == [3.0, 3.0] and np.isnan(pred[:, 1]).all()


def test_log10_target_fits_in_log_units_and_predicts_in_the_users():
    X = np.zeros((3, 1))
    model = Log10Target(Mean()).fit(X, np.array([1.0, 10.0, 1000.0]))
    assert model.model == pytest.approx(4 / 3)  # the mean of the logs
    assert model.predict(X[:1]) == pytest.approx([10 ** (4 / 3)])


@pytest.mark.parametrize("task,transforms", [("regression", ["log10"]), ("binary", None)])
def test_gbm_estimator_and_its_stored_models_predict_the_same(task, transforms):
    smiles = ["C" * k + "O" for k in range(1, 41)]
    x = feature_matrix("maplight", smiles)
    size = np.array([s.count("C") for s in smiles], dtype=float)
    y = (10.0 ** (size / 8) if task == "regression" else (size > 20).astype(float))[:, None]
    model = boosted_trees(task, seed=0, threads=1, transforms=transforms).fit(x[::2], y[::2])
    assert isinstance(model.estimators_[0], Log10Target if transforms else BoostedTarget)
    pred = model.predict(x[1::2])
    assert np.array_equal(pred, fitted_boosters(task, model.models, transforms).predict(x[1::2]))
    if transforms:  # the booster itself predicts log10 units
        assert np.array_equal(pred[:, 0], 10.0 ** model.models[0].predict(x[1::2]))
    else:
        assert ((pred >= 0) & (pred <= 1)).all()


def test_rf_estimator_and_its_stored_models_predict_the_same():
    smiles = ["C" * k + "O" for k in range(1, 31)]
    x = feature_matrix("morgan", smiles)
    y = np.array([[float(k > 15), np.nan] for k in range(1, 31)])
    model = random_forests("binary", seed=0, threads=1).fit(x, y)
    assert model.models[1] is None
    pred = model.predict(x)
    assert np.array_equal(pred, fitted_forests("binary", model.models).predict(x), equal_nan=True)
    one_class = random_forests("binary").fit(x, np.zeros((30, 1)))
    assert one_class.predict(x[:2]).tolist() == [[0.0], [0.0]]  # no 1 seen: probability 0
