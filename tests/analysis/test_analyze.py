"""`graphnorm analyze` (graphnorm/analysis/analyze.py): the report over a benchmark split or
own molecules, featurized as each checkpoint was trained; the dataset defaults to the
checkpoint's."""
import json

import pytest

from graphnorm.analysis.analyze import analyze
from graphnorm.cli import main


@pytest.fixture(scope="module")
def two_runs(raw_dir, cache_root, zinc_subset, tmp_path_factory):
    """Two tiny checkpoints that differ in norm and in featurizer (max_hops 5 and 3)."""
    from tiny_runs import tiny_config
    from graphnorm.train.run import train

    out = tmp_path_factory.mktemp("analyze")
    train(tiny_config(raw_dir, cache_root, out / "ln", norm="ln", max_epochs=1))
    train(tiny_config(raw_dir, cache_root, out / "h3", max_epochs=1, featurizer={"max_hops": 3}))
    return out / "ln" / "best.ckpt", out / "h3" / "best.ckpt"


def test_analyze_compares_two_checkpoints(two_runs, raw_dir, cache_root, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNORM_CACHE", str(cache_root))
    a, b = two_runs
    report = analyze(str(a), "zinc-subset", tmp_path, compare=str(b), raw_dir=str(raw_dir), limit=200)
    assert len(report["runs"]) == 2 and report["graphs"] == 200
    for r in report["runs"].values():
        assert r["vnode"]["n"] == 200 and r["tokens"]["n"] > 200
        assert -4.0 <= r["vnode"]["uniformity"] <= 0.0
        assert 0 < r["vnode"]["ev_1"] <= 1
    for name in ("analysis.json", "spectrum_vnode.png", "explained_variance_tokens.png",
                 "dimension_distributions.png"):
        assert (tmp_path / name).stat().st_size > 0




def test_analyze_reads_dataset_and_featurizer_from_the_checkpoint(two_runs, raw_dir, cache_root,
                                                                 tmp_path, capsys):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.chem import FeaturizerConfig

    _, h3 = two_runs
    loaded = load_checkpoint(h3)  # one road: config -> data cache, model sizes, checkpoint
    assert loaded.featurizer == FeaturizerConfig(vocab="zinc", max_hops=3)
    assert loaded.meta["model_config"]["max_hops"] == 3
    assert main(["analyze", "--checkpoint", str(h3), "--raw-dir", str(raw_dir),
                 "--limit", "50", "--out", str(tmp_path)]) == 0  # no --dataset needed
    report = json.loads((tmp_path / "analysis.json").read_text())
    assert report["dataset"] == "zinc-subset" and report["graphs"] == 50
    assert (cache_root / "zinc-subset" / "raw-h3-d20" / "manifest.json").is_file()


def test_analyze_of_an_own_data_checkpoint_asks_for_data(two_runs, tmp_path):
    from graphnorm.analysis.analyze import checkpoint_dataset
    from graphnorm.checkpoints import load_checkpoint

    loaded = load_checkpoint(two_runs[0])
    loaded.task = dict(loaded.task, name="mols.csv")
    with pytest.raises(ValueError, match="trained on 'mols.csv', not a benchmark; give --data"):
        checkpoint_dataset(loaded)
    assert checkpoint_dataset(loaded, "zinc-subset") == "zinc-subset"
