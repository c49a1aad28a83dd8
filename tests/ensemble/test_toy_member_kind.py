"""A new ensemble member kind is one module and one registry entry (docs/design.md, "Adding a
member kind"): the toy kind below -- a least-squares line on a molecule's Morgan count total,
written here as its own module would be -- trains beside a Graphormer as an ensemble member,
is weighted and combined by `Ensemble.combine` in training, and `predict` loads and combines
it the same way, with nothing else edited."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.baselines.tree_member import TreeKind, TreeMember
from graphnorm.models import MODEL_KINDS, ModelKind

TOY_FILE = "line.json"


def _size(x):
    return x.sum(1, dtype=np.float64)


def fit(task, x, y, seed, threads):
    """Per target: (intercept, slope) of y on the Morgan count total, labelled rows only."""
    size, lines = _size(x), []
    for j in range(y.shape[1]):
        have = ~np.isnan(y[:, j])
        slope, intercept = np.polyfit(size[have], y[have, j], 1)
        lines.append([float(intercept), float(slope)])
    return lines, {"fit": "least squares"}, [None] * y.shape[1]


def predict(task, lines, x, transforms):
    size = _size(x)
    return np.stack([a + b * size for a, b in lines], axis=1)


def save(out, lines, task, features, config, seed, transforms):
    path = Path(out) / TOY_FILE
    path.write_text(json.dumps({"task": dict(task), "lines": lines, "features": features}))
    return path


class LineMember(TreeMember):
    def __init__(self, path):
        record = json.loads(Path(path).read_text())
        self.path, self.meta, self.task, self.lines = Path(path), record, record["task"], record["lines"]

    def predict_smiles(self, smiles):
        from graphnorm.chem.tabular import feature_matrix

        x = feature_matrix("morgan", list(smiles))
        return torch.from_numpy(predict(self.task, self.lines, x, None)).float()


LINE = TreeKind("morgan", fit, predict, save, LineMember)  # the kind's code object


@pytest.fixture
def line_kind(monkeypatch):
    """The one registry entry (graphnorm/models.py would hold it)."""
    monkeypatch.setitem(MODEL_KINDS, "line", ModelKind(
        "line", "least-squares line on the Morgan count total", f"{__name__}:LINE", tree=True,
        model_file=TOY_FILE, member_dir="line"))


def test_a_toy_member_kind_trains_and_combines_through_the_ensemble(line_kind, tmp_path,
                                                                    cache_root):
    from graphnorm.checkpoints import checkpoint_files
    from graphnorm.ensemble import Ensemble
    from graphnorm.inference.predict import load_predictor
    from graphnorm.run_folder import read_record
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.ensemble import train_ensemble

    smiles = ["C" * k + "O" for k in range(1, 31)] + ["c1ccccc1" + "C" * k for k in range(1, 31)]
    table = tmp_path / "table.csv"
    table.write_text("smiles,logp\n" + "".join(f"{s},{len(s) / 10}\n" for s in smiles))
    out = tmp_path / "pair"
    train_ensemble(TrainConfig(
        data=str(table), target_columns=["logp"], split="random", task="regression",
        preset="tiny", max_epochs=1, batch_size=32, tree_member=True, tree_model="line",
        tree_weight="0.25", out=str(out), cache_root=str(cache_root), threads=1,
        progress=False, checkpoint_every_n_steps=1000))
    assert [p.relative_to(out).as_posix() for p in checkpoint_files(out)] == [
        "model_0/best.ckpt", f"line/{TOY_FILE}"]
    ensemble = Ensemble.read(out)  # what training recorded in ensemble.json
    assert ensemble.weights == [0.75, 0.25] and ensemble.average == "mean"
    assert [m.kind for m in ensemble.members] == [None, "line"]
    # training scored the ensemble with combine(): its files are the weighted members'
    files = [pd.read_csv(out / d / "predictions_test.csv.gz") for d in ("model_0", "line", ".")]
    by_hand = 0.75 * files[0]["pred:logp"] + 0.25 * files[1]["pred:logp"]
    np.testing.assert_allclose(files[2]["pred:logp"], by_hand, rtol=0, atol=1e-6)
    record = read_record(out)
    assert record.fields["ensemble"] == 2 and record.test == pytest.approx(
        float(np.sqrt(np.mean((by_hand - files[2]["y:logp"]) ** 2))), abs=1e-6)
    # predict loads the member by its entry and combines it the same way
    predictor = load_predictor(out)
    assert [m.kind.name for m in predictor.members][1] == "line"
    got = predictor.predict(files[2]["smiles"].tolist())
    np.testing.assert_allclose(got.prediction, files[2]["pred:logp"], rtol=0, atol=1e-5)
    one = predictor.members[1].predict_smiles(files[2]["smiles"].tolist()).numpy()[:, 0]
    np.testing.assert_allclose(one, files[1]["pred:logp"], rtol=0, atol=1e-5)
    q = predictor.interval_halfwidths(0.5)  # fitted on the combined validation predictions
    val = pd.read_csv(out / "predictions_val.csv.gz")
    assert q["logp"] == pytest.approx(float(np.sort(np.abs(val["pred:logp"] - val["y:logp"]))[
        int(np.ceil(0.5 * (len(val) + 1))) - 1]), abs=1e-6)
