"""The model registry (graphnorm.models): every kind is one entry, code outside it asks the
entry instead of branching on names, and a new kind is its own module plus one entry."""
import ast
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import graphnorm
from graphnorm import models
from graphnorm.baselines.tree_member import TreeKind, TreeMember
from graphnorm.models import MODEL_KINDS, ModelKind, model_kind

PKG = Path(graphnorm.__file__).parent
# string constants that are not model kinds although they spell one: the Graphormer's local
# message-passing option (--local-mp gine) names the GINE convolution, not the gine model
NOT_KINDS = {("graph/graphormer.py", "gine")}


def _homes(kinds) -> set[str]:
    """The registry and each kind's own module (where its code object lives)."""
    modules = {k.code.split(":")[0] for k in kinds.values()}
    return {"models.py"} | {m.removeprefix("graphnorm.").replace(".", "/") + ".py" for m in modules}


def _names_branched_on(root: Path, kinds=MODEL_KINDS) -> list[str]:
    """Model-kind names compared (``==``, ``!=``, ``in``) or looked up (``x["rf"]``) in a
    module under ``root`` other than the registry and the kinds' own modules."""
    names, homes, found = set(kinds), _homes(kinds), []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where in homes:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Compare):
                spelled = [node.left, *node.comparators]
            elif isinstance(node, ast.Subscript):
                spelled = [node.slice]
            else:
                continue
            for part in spelled:
                for leaf in ast.walk(part):
                    if (isinstance(leaf, ast.Constant) and leaf.value in names
                            and (where, leaf.value) not in NOT_KINDS):
                        found.append(f"{where}:{leaf.lineno} {leaf.value!r}")
    return list(dict.fromkeys(found))  # a lookup inside a comparison counts once


def test_model_kind_names_are_branched_on_only_in_the_registry():
    """No module asks "is this the rf / graphormer / ..." by name: it asks the kind's entry
    (or a loaded member's ``kind``) what it supports."""
    assert _names_branched_on(PKG) == []


def test_the_registry_check_catches_a_name_branch(tmp_path):
    (tmp_path / "models.py").write_text('KINDS = {"rf": 1}\nX = KINDS["rf"]\n')  # the home may
    (tmp_path / "run.py").write_text('def f(cfg):\n    """Not a random forest ("rf")."""\n'
                                     '    return cfg.model == "rf" or KINDS["gbm"]\n')
    assert _names_branched_on(tmp_path) == ["run.py:3 'rf'", "run.py:3 'gbm'"]


def test_every_kind_says_what_it_supports():
    assert models.RUNNABLE_MODELS == tuple(MODEL_KINDS)
    assert set(models.MODEL_NAMES) | set(models.TREE_MODELS) == set(MODEL_KINDS)
    for kind in MODEL_KINDS.values():
        code = kind.implementation()
        if kind.tree:  # fitted on SMILES features, in its own file and member folder
            assert isinstance(code, TreeKind) and kind.member_dir and not (kind.explain or kind.embed)
            assert models.kind_of_file(Path("x") / kind.member_dir / kind.model_file) is kind
        else:  # a torch model in a Lightning checkpoint, explained and embedded
            assert kind.model_file == "best.ckpt" and kind.explain and kind.embed
            assert models.kind_of_file(kind.model_file) is None
            assert kind.config_class is code.config_class and kind.default_preset in kind.presets
    assert models.kind_of_file("old_name.skops") is model_kind("rf")  # a forest renamed
    assert model_kind(None) is model_kind(models.DEFAULT_MODEL)
    with pytest.raises(ValueError, match="unknown model 'forest'"):
        model_kind("forest")
    with pytest.raises(ValueError, match="unknown tree model 'gine'"):
        models.tree_kind("gine")


# --- a toy kind: the mean of the training labels, written here as its own module would be ---

class MeanMember(TreeMember):
    def __init__(self, path):
        record = json.loads(Path(path).read_text())
        self.path, self.meta, self.task, self.mean = Path(path), record, record["task"], record["mean"]

    def predict_smiles(self, smiles):
        return torch.tensor([self.mean] * len(smiles), dtype=torch.float64)


def _fit(task, x, y, seed, threads):
    return np.nanmean(y, axis=0).tolist(), {}, [None] * y.shape[1]


def _predict(task, mean, x, transforms):
    return np.tile(mean, (len(x), 1))


def _save(out, mean, task, features, config, seed, transforms):
    path = Path(out) / "mean.json"
    path.write_text(json.dumps({"task": dict(task), "mean": mean}))
    return path


TOY = TreeKind("morgan", _fit, _predict, _save, MeanMember)


def test_a_new_kind_is_its_own_module_and_one_entry(monkeypatch, tmp_path, cache_root):
    """Registering one entry (its code above) is all a kind needs: train fits and scores it,
    `predict` finds and loads its file, and embed / explain refuse it by what it supports."""
    from graphnorm.checkpoints import CheckpointError, checkpoint_files
    from graphnorm.explain.explainer import Explainer
    from graphnorm.inference.embed import load_embedder
    from graphnorm.inference.predict import load_predictor
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.processes import train_run

    monkeypatch.setitem(MODEL_KINDS, "mean", ModelKind(
        "mean", "mean of the training labels", f"{__name__}:TOY", tree=True,
        model_file="mean.json", member_dir="mean"))
    smiles = ["C" * k + "O" for k in range(1, 31)] + ["c1ccccc1" + "C" * k for k in range(1, 31)]
    table = tmp_path / "table.csv"
    table.write_text("smiles,logp\n" + "".join(f"{s},{len(s) / 10}\n" for s in smiles))
    out = tmp_path / "run"
    result = train_run(TrainConfig(data=str(table), target_columns=["logp"], split="random",
                                   task="regression", model_name="mean", out=str(out),
                                   cache_root=str(cache_root), threads=1, progress=False))
    assert result["model"] == "mean" and np.isfinite(result["test_rmse"])
    assert checkpoint_files(out) == [out / "mean.json"]
    predictor = load_predictor(out)
    assert predictor.members[0].kind.name == "mean" and predictor.graph_members == []
    mean = json.loads((out / "mean.json").read_text())["mean"][0]
    assert predictor.predict(["CCO", "CCCO"]).prediction.tolist() == pytest.approx([mean] * 2)
    with pytest.raises(CheckpointError, match="mean of the training labels model"):
        load_embedder(out)
    with pytest.raises(CheckpointError, match="explain takes graph models"):
        Explainer(predictor)
