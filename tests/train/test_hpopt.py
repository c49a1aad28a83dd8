"""graphnorm hpopt: Optuna trials are training runs; best.yaml is a config train takes; a
rerun continues the study."""
import yaml
import pandas as pd
import pytest

from graphnorm.cli import main


@pytest.fixture
def small_space(monkeypatch):
    from graphnorm.train import hpopt

    space = dict(hpopt.SEARCH_SPACE, max_steps=("choice", [3, 5]), preset=("choice", ["tiny"]),
                 batch_size=("choice", [32]))
    monkeypatch.setattr(hpopt, "SEARCH_SPACE", space)


@pytest.mark.slow  # trains several trials: ~20 CPU-s
def test_trials_best_yaml_and_resume(small_space, zinc_property_table, cache_root, tmp_path):
    table = tmp_path / "t.csv"
    zinc_property_table.head(120).to_csv(table, index=False)
    out = tmp_path / "search"
    argv = ["hpopt", "--data", str(table), "--target-columns", "logp", "--split", "random",
            "--recipe", "small-table",  # from scratch: the size is searched
            "--threads", "1", "--cache-root", str(cache_root), "--out", str(out)]
    assert main([*argv, "--trials", "2"]) == 0
    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == 2 and set(trials["params_max_steps"]) <= {3, 5}
    best = yaml.safe_load((out / "best.yaml").read_text())
    assert best["recipe"] == "small-table" and best["data"] == str(table)
    assert best["preset"] == "tiny" and "descriptors" in best["featurizer"]
    assert main([*argv, "--trials", "1"]) == 0  # continues the study in study.db
    assert len(pd.read_csv(out / "trials.csv")) == 3

    from resolved import resolved

    cfg = resolved(["train", "--config", str(out / "best.yaml")])
    assert cfg.max_steps == best["max_steps"] and cfg.lr == pytest.approx(best["lr"])
    assert main(["hpopt", "--data", str(table), "--out", str(tmp_path / "x")]) == 2  # no budget


def test_trials_that_fine_tune_keep_the_backbones_size():
    import optuna

    from graphnorm.tasks import TASKS
    from graphnorm.train.hpopt import SEARCH_SPACE, sample

    trial = optuna.trial.FixedTrial({"lr": 1e-3, "weight_decay": 1e-2, "max_steps": 750,
                                     "batch_size": 32, "dropout": 0.1, "preset": "small",
                                     "loss": "mse", "descriptors": True})
    assert sample(trial, TASKS["regression"])["preset"] == "small"
    tuned = sample(trial, TASKS["regression"], backbone="admet")
    assert "preset" not in tuned and set(tuned) == set(SEARCH_SPACE) - {"preset"}


def test_the_default_search_fine_tunes(zinc_property_table, tmp_path):
    from resolved import resolved

    table = tmp_path / "t.csv"
    zinc_property_table.head(60).to_csv(table, index=False)
    cfg = resolved(["hpopt", "--data", str(table), "--target-columns", "logp",
                    "--out", str(tmp_path / "o")])
    assert cfg.recipe == "admet" and cfg.init_from == "admet"
