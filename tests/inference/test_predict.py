"""Prediction from SMILES with a trained checkpoint (graphnorm/inference/predict.py, `graphnorm
predict`): rows in order with their own errors, sizes beyond training flagged, batch-
independent outputs, the featurizer read back from the checkpoint."""
import pandas as pd
import pytest

from graphnorm.inference.predict import load_predictor


def test_predictor_rows_in_order_with_errors(tiny_run):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    df = predictor.predict(["CCO", "not a smiles", "", "c1ccccc1", "[U]"])
    assert list(df.columns) == ["smiles", "prediction", "error"]
    assert df.error.tolist()[0] == "" and df.error.tolist()[3] == ""
    assert "not a smiles" in df.error[1] and "empty" in df.error[2] and "[U]" in df.error[4]
    assert df.prediction[[1, 2, 4]].isna().all() and df.prediction[[0, 3]].notna().all()


def test_a_call_where_every_row_fails_gives_error_rows_and_no_warning(tiny_run, tmp_path):
    """Nothing parsed: every row has its error and no number, and no library warning about
    averaging an empty ensemble leaks to the user (an ensemble: its spread is computed too)."""
    import warnings

    out, _ = tiny_run
    predictor = load_predictor([out / "best.ckpt", out / "best.ckpt"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = predictor.predict(["C1CC", "not a smiles"])
    assert df.prediction.isna().all() and df.prediction_std.isna().all()
    assert "C1CC" in df.error[0] and "not a smiles" in df.error[1]


def test_predict_refuses_molecules_rdkit_cannot_sanitize(tiny_run):
    """A five-valent carbon gets an error row with RDKit's reason, never a number."""
    out, _ = tiny_run
    bad = ["C(C)(C)(C)(C)C", "C#C#C"]
    df = load_predictor(out / "best.ckpt").predict(["CCO"] + bad)
    assert df.prediction[1:].isna().all() and df.prediction[0] == df.prediction[0]
    for i, s in enumerate(bad, 1):
        assert repr(s) in df.error[i] and "valence" in df.error[i]


def test_prediction_beyond_training_sizes_is_flagged(tiny_run, zinc_subset):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    from graphnorm.inference.predict import ExtrapolationWarning
    from graphnorm.train.datamodule import graph_sizes

    largest = int(graph_sizes(zinc_subset["train"]).max())
    assert predictor.loaded.meta["train_domain"]["max_atoms"] <= largest  # a slice of train
    huge = "C" * (largest + 5)
    # rows are counted from 1, as a user counts them (df.attrs keys stay DataFrame positions)
    with pytest.warns(ExtrapolationWarning, match=f"row 2 .*{largest + 5} atoms"):
        df = predictor.predict(["CCO", huge])
    assert (df.error == "").all() and df.prediction.notna().all()
    assert list(df.attrs["warnings"]) == [1] and "extrapolation" in df.attrs["warnings"][1]


def test_the_extrapolation_flag_names_a_size_or_an_atom_outside_the_elements():
    from graphnorm.chem import FeaturizerConfig, featurize_smiles, graph_data
    from graphnorm.inference.predict import extrapolation_flag

    def graph(smiles):
        return graph_data(featurize_smiles(smiles, FeaturizerConfig()), smiles)

    assert extrapolation_flag(graph("CCO"), 3) == ""
    assert extrapolation_flag(graph("CCCC"), 3).startswith("4 atoms, more than any training "
                                                           "molecule (3)")
    assert extrapolation_flag(graph("CCCC"), None) == ""
    assert "wildcard" in extrapolation_flag(graph("[*]CC"), None, wildcards=True)
    assert extrapolation_flag(graph("CC[U]"), 10, wildcards=True) == ""  # uranium: an element
    assert extrapolation_flag(graph("[*]CC"), None) == ""  # own tables of polymer units train on *


def test_prediction_alone_equals_prediction_in_batch(tiny_run):
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    mols = ["CCO", "c1ccccc1", "CC(=O)Nc1ccc(O)cc1", "CCN(CC)CC", "O=C(O)c1ccccc1O"]
    together = predictor.predict(mols).prediction
    alone = [predictor.predict([m]).prediction[0] for m in mols]
    assert together.tolist() == pytest.approx(alone, abs=1e-5)


def test_cli_predict_file_and_exit_codes(tiny_run, tmp_path):
    from graphnorm.cli import main

    out, _ = tiny_run
    smi = tmp_path / "mols.smi"
    smi.write_text("CCO ethanol\nxyz\n\nc1ccccc1\n")
    csv = tmp_path / "preds.csv"
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(smi),
                 "--output", str(csv)]) == 0
    df = pd.read_csv(csv, keep_default_na=False)
    assert df.smiles.tolist() == ["CCO", "xyz", "", "c1ccccc1"]
    assert (df.error != "").tolist() == [False, True, True, False]
    bad = tmp_path / "bad.smi"
    bad.write_text("xyz\nC1CC\n")
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(bad),
                 "--output", str(tmp_path / "b.csv")]) == 1
    empty = tmp_path / "empty.smi"
    empty.write_text("")
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--input", str(empty)]) == 2


def test_several_checkpoints_pool_into_one_ensemble(tiny_run, tmp_path):
    from graphnorm.checkpoints import CheckpointError
    from graphnorm.cli import main

    import torch

    out, _ = tiny_run
    ckpt = torch.load(out / "best.ckpt", map_location="cpu", weights_only=False)
    bias = [k for k in ckpt["state_dict"] if k.endswith("bias")][-1]  # the output layer's
    ckpt["state_dict"][bias] += 0.5
    other = tmp_path / "other.ckpt"
    torch.save(ckpt, other)
    mols = ["CCO", "c1ccccc1", "CC(=O)O"]
    best, last = (load_predictor(p).predict(mols).prediction for p in (out / "best.ckpt", other))
    assert (best - last).abs().min() > 0.01  # two different models, or the test shows nothing
    both = load_predictor([out / "best.ckpt", other]).predict(mols)
    assert both.prediction.tolist() == pytest.approx(((best + last) / 2).tolist(), rel=1e-5)
    assert both.prediction_std.tolist() == pytest.approx(((best - last).abs() / 2).tolist(), rel=1e-4)
    csv = tmp_path / "p.csv"
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), str(other),
                 "--smiles", *mols, "--output", str(csv)]) == 0
    assert pd.read_csv(csv).prediction.tolist() == pytest.approx(both.prediction.tolist())
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_predictor([])


def test_cli_predict_reports_extrapolation_on_stderr(tiny_run, capsys):
    from graphnorm.cli import main

    out, _ = tiny_run
    assert main(["predict", "--checkpoint", str(out / "best.ckpt"), "--smiles", "CCO", "C" * 90]) == 0
    captured = capsys.readouterr()
    assert "graphnorm predict: warning: argument 2" in captured.err and "90 atoms" in captured.err
    assert captured.out.splitlines()[0] == "smiles,prediction,error" and len(captured.out.splitlines()) == 3




def test_each_failure_is_featurized_once_and_keeps_its_message(tiny_run, monkeypatch):
    """One pass of the featurizer pool gives arrays and messages together: no molecule is
    featurized a second time to recover its error."""
    import graphnorm.chem.featurize as featurize

    calls = []
    real = featurize.smiles_to_graph
    monkeypatch.setattr(featurize, "smiles_to_graph",
                        lambda s, *a: calls.append(s) or real(s, *a))
    out, _ = tiny_run
    df = load_predictor(out / "best.ckpt").predict(["CCO", "C1CC", "  ", "c1ccccc1"])
    assert sorted(calls) == sorted(["CCO", "C1CC", "c1ccccc1"])  # the blank row: no call
    assert df.error.tolist() == ["", "FeaturizationError: RDKit cannot parse SMILES 'C1CC'",
                                 "ValueError: empty SMILES", ""]


def test_predictor_featurizes_as_the_checkpoint_was_trained(tiny_run):
    from graphnorm.chem import FeaturizerConfig

    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt")
    assert predictor.featurizer == FeaturizerConfig(vocab="zinc")
    (row, graph), = predictor.featurize(["CCO"])[0]
    assert graph.path.shape == (9, predictor.featurizer.max_hops)


def test_huge_inputs_are_featurized_a_slice_at_a_time(tiny_run, monkeypatch):
    """Rows, errors and extrapolation flags land where they belong when the input is
    featurized in slices (memory stays flat on huge files)."""
    import warnings

    from graphnorm.inference.predict import Predictor

    out, _ = tiny_run
    whole = load_predictor(out / "best.ckpt")
    mols = ["CCO", "not a smiles", "c1ccccc1", "", "CC(=O)Nc1ccc(O)cc1", "C" * 60, "[U]", "CCN(CC)CC"]
    sliced = Predictor(whole.members, rows_per_pass=3)
    seen = []
    monkeypatch.setattr(sliced, "featurize", lambda s, e: (seen.append(len(s)), whole.featurize(s, e))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = whole.predict(mols), sliced.predict(mols)
    assert seen == [3, 3, 2]
    pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-5, rtol=0)
    assert a.attrs["warnings"].keys() == b.attrs["warnings"].keys() == {5}


def test_predict_progress_is_a_bar_on_a_terminal_and_lines_in_a_log(tiny_run, monkeypatch, capsys):
    """Long predictions show progress: a tqdm bar on a terminal, a line per slice in a log
    file, nothing for a one-slice input in a log or when progress is off."""
    import io
    import sys
    import warnings

    from graphnorm.inference.predict import Predictor

    out, _ = tiny_run
    whole = load_predictor(out / "best.ckpt")
    mols = ["CCO", "not a smiles", "c1ccccc1", "", "CC(=O)Nc1ccc(O)cc1", "CCCC", "[U]", "CCN(CC)CC"]
    sliced = Predictor(whole.members, rows_per_pass=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sliced.predict(mols, progress=False)
        whole.predict(mols, progress=True)
        assert capsys.readouterr().err == ""
        sliced.predict(mols, progress=True)
        err = capsys.readouterr().err
        assert [line for line in err.splitlines() if "predicted" in line] == [
            "[graphnorm] predicted 3/8 rows", "[graphnorm] predicted 6/8 rows",
            "[graphnorm] predicted 8/8 rows"]

        class Terminal(io.StringIO):
            def isatty(self):
                return True

        term = Terminal()
        monkeypatch.setattr(sys, "stderr", term)
        df = sliced.predict(mols, progress=True)
    assert "predicting" in term.getvalue() and "8/8" in term.getvalue()
    assert df.error.ne("").sum() == 3


@pytest.mark.parametrize("featurizer, tag", [({"fingerprint_bits": 128}, "fp128"),
                                              ({"descriptors": "fast"}, "rdfast")])
def test_a_molecule_feature_run_trains_and_predicts_with_its_featurizer(
        featurizer, tag, zinc_property_table, cache_root, tmp_path):
    """featurizer: {fingerprint_bits: N} or {descriptors: fast} travels once: data cache, model
    size, checkpoint, and predict featurizes new SMILES with it (own table: 200 molecules,
    seconds)."""
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.chem.descriptors import descriptor_count
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.run import train

    table = tmp_path / "mols.csv"
    zinc_property_table.head(200).to_csv(table, index=False)
    train(TrainConfig(data=str(table), target_columns=["logp"], split="random", preset="tiny",
                      max_epochs=1, batch_size=32, cache_root=str(cache_root), out=str(tmp_path / "run"),
                      progress=False, ensemble=1, tree_member=False, featurizer=featurizer))
    loaded = load_checkpoint(tmp_path / "run" / "best.ckpt")
    if "fingerprint_bits" in featurizer:
        assert loaded.featurizer.fingerprint_bits == 128 and loaded.model.fingerprint.in_features == 128
    else:
        assert loaded.featurizer.descriptors == "fast"
        assert loaded.model.descriptors.proj.in_features == descriptor_count("fast") != descriptor_count()
    assert list((cache_root / "tables").glob(f"mols-*-h5-d20-{tag}"))
    df = load_predictor(tmp_path / "run" / "best.ckpt").predict(["CCO", "c1ccccc1O", "nonsense"])
    assert df.prediction[:2].notna().all() and df.prediction[0] != df.prediction[1]
    assert "nonsense" in df.error[2]


def test_device_choice_is_resolved_or_refused_with_a_reason(tiny_run, monkeypatch):
    import torch

    from graphnorm.inference.predict import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu", jobs=4) == "cpu"
    with pytest.raises(ValueError, match="sees no GPU"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="use auto, cpu, cuda"):
        resolve_device("tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    assert resolve_device("auto", jobs=2) == "cpu"  # workers run their own CPU copies
    with pytest.raises(ValueError, match="--jobs 1"):
        resolve_device("cuda:0", jobs=2)
    # the model's device is where batches go; predictions come back on the CPU
    out, _ = tiny_run
    predictor = load_predictor(out / "best.ckpt", device="cpu")
    assert predictor.loaded.device.type == "cpu"
    assert predictor.predict(["CCO"]).prediction.notna().all()
