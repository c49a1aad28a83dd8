"""Own data end to end on real ZINC molecules with RDKit-computed targets: train --data
(two targets, missing labels, an invalid row), --ensemble, predict with std, embed, and the
messages for bad input and bad checkpoints."""
import json

import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.checkpoints import load_checkpoint
from graphnorm.cli import main

TINY = ["--preset", "tiny", "--batch-size", "32", "--lr", "1e-3", "--threads", "1",
        "--no-progress", "--checkpoint-every", "1000"]


@pytest.fixture(scope="module")
def table(zinc_property_table, tmp_path_factory):
    df = zinc_property_table.head(400).copy()
    df.loc[::7, "tpsa"] = np.nan  # missing labels: masked out of loss and metrics
    df.loc[5, "smiles"] = "C1CC"  # invalid: skipped, listed
    path = tmp_path_factory.mktemp("own") / "mols.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.fixture(scope="module")
def ensemble(table, cache_root, tmp_path_factory):
    path, _ = table
    out = tmp_path_factory.mktemp("runs") / "mine"
    assert main(["train", "--data", str(path), "--target-columns", "logp", "tpsa",
                 "--split", "random", "--max-epochs", "12", "--ensemble", "2", "--no-tree-member",
                 "--cache-root", str(cache_root), "--out", str(out), *TINY]) == 0
    return out


def _split_frame(df, out, split):
    lines = json.loads((out / "splits.json").read_text())[split]
    return df.iloc[[int(s.split()[1]) - 2 for s in lines]]


def test_learns_better_than_the_training_mean(ensemble, table):
    _, df = table
    train, test = _split_frame(df, ensemble, "train"), _split_frame(df, ensemble, "test")
    report = json.loads((ensemble / "ensemble.json").read_text())
    for k in (0, 1):
        metrics = json.loads((ensemble / f"model_{k}" / "metrics.json").read_text())
        for target in ("logp", "tpsa"):
            have = test[target].dropna()
            baseline = float((have - train[target].mean()).abs().mean())
            got = metrics["per_target"]["test"][target]
            assert got["n"] == len(have)  # missing labels are not scored
            assert got["mae"] < 0.8 * baseline, (k, target, got, baseline)
            assert got["rmse"] >= got["mae"]
    assert set(report["spearman_abs_error_std"]) == {"logp", "tpsa"}
    assert report["ensemble"]["test"]["per_target"]["logp"]["mae"] < 1.0


def test_run_files_and_checkpoint_record_the_task(ensemble, table):
    _, df = table
    skipped = pd.read_csv(ensemble / "skipped_rows.csv")
    assert skipped.row.tolist() == ["line 7"] and skipped.smiles.tolist() == ["C1CC"]
    loaded = load_checkpoint(ensemble / "model_0" / "best.ckpt")
    assert loaded.task["targets"] == ["logp", "tpsa"] and loaded.task["task_type"] == "regression"
    train = _split_frame(df, ensemble, "train")
    assert loaded.target_mean.tolist() == pytest.approx([train.logp.mean(), train.tpsa.mean()], rel=1e-4)
    assert loaded.meta["train_domain"]["max_atoms"] >= 20
    from graphnorm.checkpoints import CHECKPOINT_FORMAT

    assert loaded.meta["format"] == CHECKPOINT_FORMAT


def test_predict_ensemble_keeps_columns_and_adds_std(ensemble, table, tmp_path):
    _, df = table
    rows = df.head(40)[["id", "smiles", "logp"]].copy()
    rows.loc[38, "smiles"] = "C" * 90  # larger than any training molecule (line 40); line 7 is invalid
    rows.to_csv(tmp_path / "in.csv", index=False)
    raw = (tmp_path / "in.csv").read_bytes().split(b"\n")
    raw[3] = raw[3].replace(b",", b",\xff", 1)  # line 4: one bad byte
    (tmp_path / "in.csv").write_bytes(b"\n".join(raw))
    assert main(["predict", "--checkpoint", str(ensemble), "--input", str(tmp_path / "in.csv"),
                 "--output", str(tmp_path / "p.csv")]) == 0
    out = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    assert out.columns.tolist() == ["id", "smiles", "logp_input", "logp", "tpsa", "logp_std",
                                    "tpsa_std", "error"]
    assert out.id.tolist() == rows.id.tolist()
    assert "line 4 is not valid UTF-8" in out.error[2] and out.logp[2] == ""
    good = out[out.error == ""]
    assert len(good) == 38 and (good.logp_std.astype(float) > 0).all()
    from graphnorm.inference.predict import load_predictor

    members = [load_predictor(ensemble / f"model_{k}").predict(rows.smiles[:2]) for k in (0, 1)]
    mean = (members[0].logp + members[1].logp) / 2
    assert good.logp.astype(float)[:2].tolist() == pytest.approx(mean.tolist(), abs=1e-4)


def test_predict_warnings_name_the_line(ensemble, tmp_path, capsys):
    (tmp_path / "m.smi").write_text("CCO\n" * 32 + "C" * 90 + "\n")
    assert main(["predict", "--checkpoint", str(ensemble / "model_0"), "--input",
                 str(tmp_path / "m.smi")]) == 0
    assert "warning: line 33 " in capsys.readouterr().err


def test_predict_needs_a_smiles_column(ensemble, tmp_path, capsys):
    pd.DataFrame({"id": [1, 2], "structure": ["CCO", "c1ccccc1"]}).to_csv(tmp_path / "x.csv", index=False)
    assert main(["predict", "--checkpoint", str(ensemble), "--input", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "columns found: id, structure" in err and "--smiles-column" in err
    assert main(["predict", "--checkpoint", str(ensemble), "--input", str(tmp_path / "x.csv"),
                 "--smiles-column", "structure"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("id,structure,logp,tpsa") and out[1].startswith("1,CCO,")


def test_embed_vnode_per_row(ensemble, table, tmp_path, capsys):
    _, df = table
    (tmp_path / "m.smi").write_text("CCO a\nnot_a_smiles b\nc1ccccc1 c\n")
    member = str(ensemble / "model_0" / "best.ckpt")
    assert main(["embed", "--checkpoint", member, "--input", str(tmp_path / "m.smi"),
                 "--output", str(tmp_path / "e.npy")]) == 0
    emb = np.load(tmp_path / "e.npy")
    assert emb.shape == (3, 32) and np.isnan(emb[1]).all() and np.isfinite(emb[[0, 2]]).all()
    assert "line 2" in capsys.readouterr().err
    assert main(["embed", "--checkpoint", member, "--input", str(tmp_path / "m.smi"),
                 "--output", str(tmp_path / "e.csv"), "--atom-mean"]) == 0
    table_out = pd.read_csv(tmp_path / "e.csv")
    assert table_out.name.tolist() == ["a", "b", "c"] and "atom_mean_31" in table_out
    assert table_out.filter(like="vnode_").to_numpy() == pytest.approx(emb[[0, 1, 2]], nan_ok=True, abs=1e-5)
    # the same vector the model's head reads
    loaded = load_checkpoint(member)
    from graphnorm.graph import collate_graphs
    from graphnorm.chem import smiles_to_data

    with torch.no_grad():
        vnode = loaded.model.encode(collate_graphs([smiles_to_data("CCO")])).vnode[0].numpy()
    assert emb[0] == pytest.approx(vnode, abs=1e-5)
    assert main(["embed", "--checkpoint", str(ensemble), "--smiles", "CCO",
                 "--output", str(tmp_path / "x.npy")]) == 2
    assert "ensemble of 2 models" in capsys.readouterr().err and not (tmp_path / "x.npy").exists()


def test_checkpoint_messages(ensemble, tmp_path, capsys):
    (tmp_path / "notes.ckpt").write_text("hello\n")
    good = (ensemble / "model_0" / "best.ckpt").read_bytes()
    (tmp_path / "cut.ckpt").write_bytes(good[: len(good) // 2])
    torch.save({"obj": pd.Timestamp(0)}, tmp_path / "pickled.ckpt")
    (tmp_path / "empty_dir").mkdir()
    expect = {"notes.ckpt": "not a checkpoint (not a PyTorch zip archive)",
              "cut.ckpt": "truncated or corrupt",
              "pickled.ckpt": "not a graphnorm checkpoint",
              "empty_dir": "directory without checkpoints"}
    for name, message in expect.items():
        assert main(["predict", "--checkpoint", str(tmp_path / name), "--smiles", "CCO"]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and name in err and len(err.splitlines()) == 1, err


def test_format_1_checkpoint_with_scalar_scaling_still_predicts(ensemble, tmp_path):
    from graphnorm.inference.predict import load_predictor

    ckpt = torch.load(ensemble / "model_0" / "best.ckpt", weights_only=True)
    meta = ckpt["graphnorm"]
    mean, std = meta["target_mean"][0], meta["target_std"][0]
    meta.update(format=1, target_mean=mean, target_std=std)  # what format 1 held: floats
    meta["task"].pop("targets")
    ckpt["state_dict"]["target_mean"] = torch.tensor(mean)
    ckpt["state_dict"]["target_std"] = torch.tensor(std)
    torch.save(ckpt, tmp_path / "old.ckpt")
    old = load_predictor(tmp_path / "old.ckpt").predict(["CCO", "c1ccccc1"])
    new = load_predictor(ensemble / "model_0").predict(["CCO", "c1ccccc1"])
    assert old.columns.tolist() == ["smiles", "prediction", "prediction_1", "error"]
    assert old.prediction.tolist() == pytest.approx(new.logp.tolist(), abs=1e-4)


@pytest.mark.slow  # trains a benchmark: ~20 CPU-s
def test_benchmark_and_analyze_accept_data(ensemble, table, cache_root, tmp_path):
    path, _ = table
    assert main(["benchmark", "--data", str(path), "--target-columns", "logp", "--norms", "ln",
                 "--seeds", "1", "--max-epochs", "1", "--ensemble", "1", "--cache-root", str(cache_root),
                 "--out", str(tmp_path / "bench"), *TINY]) == 0
    summary = json.loads((tmp_path / "bench" / "summary.json").read_text())
    assert str(path) in json.dumps(summary)
    run = json.loads((tmp_path / "bench" / "runs" / "ln" / "seed0" / "metrics.json").read_text())
    assert list(run["per_target"]["test"]) == ["logp"]
    assert main(["analyze", "--checkpoint", str(ensemble / "model_0" / "best.ckpt"), "--data",
                 str(path), "--limit", "100", "--out", str(tmp_path / "an")]) == 0
    report = json.loads((tmp_path / "an" / "analysis.json").read_text())
    assert report["graphs"] == 100 and report["dataset"] == str(path)


def test_bad_table_fails_before_any_output(table, tmp_path, capsys):
    path, _ = table
    out = tmp_path / "run"
    assert main(["train", "--data", str(path), "--target-columns", "logP", "pIC50",
                 "--out", str(out), *TINY]) == 2
    err = capsys.readouterr().err
    assert "no column 'pIC50'; columns found: id, smiles, logp, tpsa, qed_high" in err
    assert not out.exists()


@pytest.mark.slow  # trains: ~12 CPU-s
def test_classification_reports_rocauc(table, cache_root, tmp_path):
    _, df = table
    df = df.assign(polar=np.where(df.tpsa.isna(), np.nan, (df.tpsa > 60).astype(float)))
    df.to_csv(tmp_path / "cls.csv", index=False)
    out = tmp_path / "cls"
    assert main(["train", "--data", str(tmp_path / "cls.csv"), "--target-columns", "polar",
                 "qed_high", "--task", "classification", "--max-epochs", "6", "--ensemble", "1",
                 "--no-tree-member",
                 "--cache-root", str(cache_root), "--out", str(out), *TINY]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    test = metrics["per_target"]["test"]
    assert metrics["metric"] == "rocauc" and test["polar"]["rocauc"] > 0.7, test
    assert test["polar"]["n"] < test["qed_high"]["n"]  # missing labels are not scored
    from graphnorm.inference.predict import load_predictor

    p = load_predictor(out).predict(["CCO", "CC(=O)Nc1ccc(O)cc1"])
    assert p.columns.tolist() == ["smiles", "polar", "qed_high", "error"]
    assert p.polar.between(0, 1).all() and p.qed_high.between(0, 1).all()
