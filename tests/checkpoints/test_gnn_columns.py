"""The +gnn tree features (graphnorm/checkpoints/gnn_columns.py, graphnorm/baselines/
tree_features.py): a pre-trained Graphormer's [VNode] embedding and task outputs as columns of
the boosted trees."""
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_corpus import make_tiny_corpus

from graphnorm.baselines.tree_features import feature_matrix, signature, width
from graphnorm.checkpoints import load_gnn_columns
from graphnorm.checkpoints.gnn_columns import GnnFeaturesError


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    """A tiny `graphnorm pretrain` checkpoint (1 block x 16, a few steps)."""
    from graphnorm.pretrain import splits
    from graphnorm.pretrain.fit import train
    from graphnorm.pretrain.folder import BEST_FILE
    from graphnorm.pretrain.setup import PretrainRun, PretrainSpec

    root = tmp_path_factory.mktemp("backbone")
    held = splits.HELD_TASK_MIN
    splits.HELD_TASK_MIN = 5
    try:
        spec = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                            exclude_tdc=False, val_percent=30)
        run = PretrainRun(spec, make_tiny_corpus(root), cache=root / "cache", progress=False)
        train(run, root, 600, max_steps=4, eval_every=2, progress=False)
    finally:
        splits.HELD_TASK_MIN = held
    return root / BEST_FILE, run.corpus.num_tasks


def test_columns_are_the_embedding_and_one_output_per_task(backbone):
    path, tasks = backbone
    gnn = load_gnn_columns(path)
    smiles = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1"]
    x = gnn.columns(smiles)
    assert x.shape == (3, 16 + tasks) == (3, gnn.width) and np.isfinite(x).all()
    # a molecule's columns do not depend on the molecules batched with it (eval mode)
    np.testing.assert_allclose(gnn.columns(smiles[1:2])[0], x[1], rtol=0, atol=1e-5)
    assert not np.allclose(x[0], x[1])
    full = feature_matrix("maplight+gnn", smiles, gnn=gnn)
    assert full.shape[1] == width("maplight+gnn", gnn=gnn) == width("maplight") + x.shape[1]
    np.testing.assert_array_equal(full[:, -x.shape[1]:], x)


def test_a_set_and_its_backbone_must_go_together(backbone):
    path, _ = backbone
    gnn = load_gnn_columns(path)
    with pytest.raises(ValueError, match="--feature-backbone"):
        width("maplight+gnn")
    with pytest.raises(ValueError, match="--feature-backbone is read by"):
        width("maplight", gnn=gnn)
    with pytest.raises(GnnFeaturesError, match="no such checkpoint"):
        load_gnn_columns(path.parent / "missing.ckpt")
    with pytest.raises(GnnFeaturesError, match="'not a smiles'"):
        gnn.columns(["CCO", "not a smiles"])
    assert signature("maplight+admet+gnn", gnn=gnn)["gnn_backbone"] == signature(
        "maplight+gnn", gnn=gnn)["gnn_backbone"]


def test_a_fitted_model_keeps_its_backbone_and_refuses_another(
        backbone, zinc_property_table, cache_root, tmp_path):
    from graphnorm.baselines.tree_member import TreeFileError
    from graphnorm.checkpoints import load_member
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.tree_run import train_trees

    path, _ = backbone
    table = tmp_path / "t.csv"
    zinc_property_table.head(120)[["smiles", "logp"]].to_csv(table, index=False)
    out = tmp_path / "gbm"
    train_trees(TrainConfig(data=str(table), split="random", model_name="gbm",
                            tree_features="maplight+gnn", feature_backbone=str(path),
                            out=str(out), cache_root=str(cache_root), threads=1, progress=False))
    moved = tmp_path / "elsewhere"
    shutil.copytree(out, moved)  # the folder goes elsewhere; its copy of the backbone with it
    model = load_member(moved / "gbm.json")
    written = pd.read_csv(out / "predictions_test.csv.gz")
    got = model.predict_smiles(written["smiles"].tolist()).numpy()[:, 0]
    np.testing.assert_allclose(got, written["pred:logp"], rtol=0, atol=1e-5)
    state = torch.load(path, weights_only=True)  # another network in the folder
    state["state_dict"] = {k: v + 0.01 if v.is_floating_point() else v
                           for k, v in state["state_dict"].items()}
    target = moved / "feature_backbone.ckpt"
    target.unlink()
    torch.save(state, target)
    from graphnorm.checkpoints import CheckpointError

    with pytest.raises(CheckpointError, match="another feature backbone"):
        load_member(moved / "gbm.json")
    target.unlink()
    with pytest.raises(CheckpointError, match="feature backbone of its folder"):
        load_member(moved / "gbm.json")
    from graphnorm.baselines.boosted_file import load_boosted

    with pytest.raises(TreeFileError, match="load_member"):  # loaded without its network
        load_boosted(out / "gbm.json").predict_smiles(["CCO"])
