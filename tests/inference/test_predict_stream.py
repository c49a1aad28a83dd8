"""`graphnorm predict` at screening scale (graphnorm/inference/stream.py): the input read,
predicted and written a chunk at a time, in worker processes with --jobs, resumable after an
interruption; the same rows and numbers as the in-memory `Predictor` path."""
import gzip
import io
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from graphnorm.cli import main
from graphnorm.inference.predict import Predictor, load_predictor, read_input
from graphnorm.models import model_kind

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_checkpoint import write_checkpoint, write_ensemble  # noqa: E402

ROWS = 300
BAD_SMILES_AT, NOT_UTF8_AT = 100, 170  # data rows (0-based) of the two broken rows


@pytest.fixture(scope="module")
def zinc_smiles(raw_dir):
    with gzip.open(raw_dir / "zinc" / "jtvae_test.txt.gz", "rt") as f:
        return [line.strip() for _, line in zip(range(ROWS), f)]


@pytest.fixture
def screening_csv(zinc_smiles, tmp_path):
    """A gzip CSV of ZINC molecules with an id column, one invalid SMILES and one line
    that is not UTF-8 in the middle."""
    lines = [b"id,smiles"]
    for k, s in enumerate(zinc_smiles):
        cell = s.encode()
        if k == BAD_SMILES_AT:
            cell = b"C1CC(not a molecule"
        if k == NOT_UTF8_AT:
            cell = b"CC\xff" + cell
        lines.append(b"Z%d," % k + cell)
    path = tmp_path / "library.csv.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return path


@pytest.fixture
def ensemble(tmp_path):
    return write_ensemble(tmp_path / "ens", members=2)


def predict_cli(checkpoint, source, out, *extra) -> int:
    return main(["predict", "--checkpoint", str(checkpoint), "--input", str(source),
                 "--output", str(out), *map(str, extra)])


def in_memory_csv(checkpoint, source, rows_per_pass, **kw) -> str:
    predictor = Predictor(load_predictor(checkpoint).members, rows_per_pass=rows_per_pass)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = predictor.predict_table(read_input(source, kw.get("smiles_column")))
    buffer = io.StringIO()
    df.to_csv(buffer, index=False)
    return buffer.getvalue()


def test_streamed_predict_equals_the_in_memory_path(ensemble, screening_csv, tmp_path):
    """Chunks of 64 rows give the in-memory path's file byte for byte when it batches the
    same slices, and its numbers to float32 rounding when it predicts all rows at once."""
    out = tmp_path / "streamed.csv"
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 0
    text = out.read_text()
    assert text == in_memory_csv(ensemble, screening_csv, rows_per_pass=64)
    df, whole = pd.read_csv(out, keep_default_na=False), pd.read_csv(
        io.StringIO(in_memory_csv(ensemble, screening_csv, rows_per_pass=10_000)), keep_default_na=False)
    assert list(df.columns) == ["id", "smiles", "prediction", "prediction_std", "error"]
    assert len(df) == ROWS and df.id.tolist() == [f"Z{k}" for k in range(ROWS)]
    ok = df.error == ""
    np.testing.assert_allclose(df.prediction[ok].astype(float), whole.prediction[ok].astype(float),
                               rtol=0, atol=1e-5)
    # the broken rows name themselves; their neighbours are predicted
    assert "C1CC(not a molecule" in df.error[BAD_SMILES_AT] and df.prediction[BAD_SMILES_AT] == ""
    assert df.error[NOT_UTF8_AT].startswith(f"UnicodeDecodeError: line {NOT_UTF8_AT + 2} is not valid UTF-8")
    assert ok.sum() == ROWS - 2 and not (tmp_path / "streamed.csv.progress.json").exists()


def test_jobs_2_writes_what_jobs_1_writes(ensemble, screening_csv, tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert predict_cli(ensemble, screening_csv, one, "--chunk-rows", 40) == 0
    assert predict_cli(ensemble, screening_csv, two, "--chunk-rows", 40, "--jobs", 2) == 0
    assert two.read_bytes() == one.read_bytes()


def test_an_interrupted_run_resumes_to_the_uninterrupted_output(ensemble, screening_csv, tmp_path,
                                                                 monkeypatch, capsys):
    from graphnorm.inference.resumable_csv import ResumableCsv

    whole = tmp_path / "whole.csv"
    assert predict_cli(ensemble, screening_csv, whole, "--chunk-rows", 64) == 0
    out = tmp_path / "out.csv"
    real_append, calls = ResumableCsv.append, []

    def append_then_interrupt(self, frame):
        calls.append(len(frame))
        if len(calls) == 3:  # Ctrl-C while the third chunk is predicted
            raise KeyboardInterrupt
        real_append(self, frame)

    monkeypatch.setattr(ResumableCsv, "append", append_then_interrupt)
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 130
    monkeypatch.setattr(ResumableCsv, "append", real_append)
    assert "interrupted: 128 rows are in" in capsys.readouterr().err
    assert len(pd.read_csv(out)) == 128 and (tmp_path / "out.csv.progress.json").is_file()
    # a crash in the middle of a write leaves a cut row: it and the rest of its chunk go
    with open(out, "a") as f:
        f.write("Z128,CC(C)(C)c1ccc2occ(CC(=O)N")
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 0
    captured = capsys.readouterr()
    assert "resuming: 128 rows of an interrupted run are already in" in captured.err
    assert "kept from the interrupted run" in captured.out
    assert out.read_bytes() == whole.read_bytes()
    assert not (tmp_path / "out.csv.progress.json").exists()


def test_a_partial_output_of_another_command_is_started_over(ensemble, screening_csv, tmp_path,
                                                              monkeypatch, capsys):
    """Rows of another model must not be kept as this model's: only the same input,
    checkpoints and options resume; a finished output is simply written again."""
    from graphnorm.inference.resumable_csv import ResumableCsv

    out = tmp_path / "out.csv"
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 0
    finished = out.read_bytes()
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 0
    assert out.read_bytes() == finished and "resuming" not in capsys.readouterr().err
    real_append = ResumableCsv.append
    monkeypatch.setattr(ResumableCsv, "append", lambda self, frame: (_ for _ in ()).throw(KeyboardInterrupt))
    assert predict_cli(ensemble, screening_csv, out, "--chunk-rows", 64) == 130
    monkeypatch.setattr(ResumableCsv, "append", real_append)
    assert (tmp_path / "out.csv.progress.json").is_file()  # a partial output of the ensemble
    other = write_checkpoint(tmp_path / "other" / "best.ckpt", seed=5)
    assert predict_cli(other, screening_csv, out, "--chunk-rows", 64) == 0
    assert "starting over" in capsys.readouterr().err
    assert out.read_text() == in_memory_csv(other, screening_csv, rows_per_pass=64)


def test_smi_input_with_command_line_smiles_and_a_bad_row(tmp_path, zinc_smiles, capsys):
    """.smi (SMILES name per line) after --smiles rows: the columns of the in-memory
    concatenation, a bad row mid-file named in its error, blank lines kept as rows."""
    ckpt = write_checkpoint(tmp_path / "m" / "best.ckpt")
    lines = [f"{s} mol{k}" for k, s in enumerate(zinc_smiles[:50])]
    lines[20] = "C1CC(x broken row"
    lines[30] = ""
    smi = tmp_path / "mols.smi"
    smi.write_text("\n".join(lines) + "\n\n")
    out = tmp_path / "out.csv"
    assert main(["predict", "--checkpoint", str(ckpt), "--smiles", "CCO", "c1ccccc1",
                 "--input", str(smi), "--output", str(out), "--chunk-rows", "16"]) == 0
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == ["smiles", "prediction", "error", "name"]
    assert len(df) == 52 and df.smiles[:2].tolist() == ["CCO", "c1ccccc1"]
    assert "C1CC(x" in df.error[22] and "empty SMILES" in df.error[32]
    assert (df.error != "").sum() == 2 and df.name[2] == "mol0"
    reference = Predictor(load_predictor(ckpt).members, rows_per_pass=16).predict_table(read_input(smi))
    np.testing.assert_array_equal(pd.to_numeric(df.prediction[2:]), reference.prediction)
    capsys.readouterr()
    # to stdout, the same rows
    assert main(["predict", "--checkpoint", str(ckpt), "--smiles", "CCO", "c1ccccc1",
                 "--input", str(smi), "--chunk-rows", "16"]) == 0
    assert capsys.readouterr().out == out.read_text()


def test_sdf_and_parquet_inputs_stream_like_the_whole_file(tmp_path, zinc_smiles):
    from rdkit import Chem

    ckpt = write_checkpoint(tmp_path / "m" / "best.ckpt")
    sdf = tmp_path / "mols.sdf.gz"
    with gzip.open(sdf, "wt") as handle:
        writer = Chem.SDWriter(handle)
        for k, s in enumerate(zinc_smiles[:40]):
            mol = Chem.MolFromSmiles(s)
            mol.SetProp("id", f"S{k}")
            if k == 25:
                mol.SetProp("note", "only here")
            writer.write(mol)
        writer.close()
    out = tmp_path / "sdf.csv"
    assert predict_cli(ckpt, sdf, out, "--chunk-rows", 16) == 0
    assert out.read_text() == in_memory_csv(ckpt, sdf, rows_per_pass=16)
    pytest.importorskip("pyarrow")
    parquet = tmp_path / "mols.parquet"
    pd.DataFrame({"smiles": zinc_smiles[:40], "n": range(40)}).to_parquet(parquet, row_group_size=7)
    assert predict_cli(ckpt, parquet, tmp_path / "pq.csv", "--chunk-rows", 16) == 0
    assert (tmp_path / "pq.csv").read_text() == in_memory_csv(ckpt, parquet, rows_per_pass=16)


def _validation_file(run: Path, binary: bool) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60).astype(float) if binary else rng.normal(size=60)
    pred = np.clip(0.6 * y + 0.2 + 0.2 * rng.random(60), 0, 1) if binary else y + rng.normal(size=60)
    pd.DataFrame({"smiles": ["C"] * 60, "y:logp": y, "pred:logp": pred}).to_csv(
        run / "predictions_val.csv.gz", index=False)


@pytest.mark.parametrize("flag", [("--interval", "0.9"), ("--calibrate", "isotonic")])
def test_intervals_and_calibration_per_chunk_equal_the_whole_table(flag, screening_csv, tmp_path):
    binary = flag[0] == "--calibrate"
    ckpt = write_checkpoint(tmp_path / "run" / "best.ckpt",
                            task_type="binary" if binary else "regression")
    _validation_file(ckpt.parent, binary)
    out = tmp_path / "out.csv"
    assert predict_cli(ckpt, screening_csv, out, "--chunk-rows", 64, *flag) == 0
    predictor = Predictor(load_predictor(ckpt).members, rows_per_pass=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = predictor.predict_table(read_input(screening_csv))
    df = predictor.add_intervals(df, 0.9) if not binary else predictor.calibrate(df, "isotonic")
    buffer = io.StringIO()
    df.to_csv(buffer, index=False)
    assert out.read_text() == buffer.getvalue()
    if not binary:
        assert {"prediction_lo", "prediction_hi"} <= set(df.columns)


class CountingTree:
    """A tree member as graphnorm/baselines defines one: a tree kind, no featurizer,
    predict_smiles."""
    featurizer = None
    kind = model_kind("rf")
    task = {"task_type": "regression", "metric": "mae", "num_tasks": 1, "targets": ["logp"]}
    targets = ["logp"]
    path = Path("tree")

    def predict_smiles(self, smiles):
        return torch.tensor([[float(len(s))] for s in smiles])


def test_tree_members_predict_each_chunks_smiles_in_workers(tmp_path, zinc_smiles):
    from graphnorm.inference.resumable_csv import ResumableCsv
    from graphnorm.inference.stream import ChunkWriter, SmilesList, predict_stream

    graph = load_predictor(write_checkpoint(tmp_path / "m" / "best.ckpt")).members[0]
    predictor = Predictor([graph, CountingTree()])
    mols = zinc_smiles[:90] + ["not a smiles"]
    outputs = []
    for jobs in (1, 2):
        source = SmilesList(mols)
        writer = ChunkWriter(predictor, [source])
        sink = ResumableCsv(tmp_path / f"j{jobs}.csv", writer.columns, {"jobs": jobs})
        summary = predict_stream(predictor, [source], writer, sink, jobs=jobs, chunk_rows=25)
        assert (summary.rows, summary.failed) == (91, 1)
        outputs.append(pd.read_csv(tmp_path / f"j{jobs}.csv", keep_default_na=False))
    pd.testing.assert_frame_equal(*outputs)
    alone = Predictor([graph]).predict(mols[:90]).prediction.to_numpy()
    lengths = np.array([len(s) for s in mols[:90]], dtype=float)
    np.testing.assert_allclose(outputs[0].prediction[:90].astype(float), (alone + lengths) / 2,
                               rtol=1e-6)
    assert outputs[0].error[90].startswith("FeaturizationError")


def test_memory_is_one_chunk_at_a_time(tmp_path, zinc_smiles, monkeypatch):
    """The reader hands over chunk_rows rows at a time and each is written before the next
    is read: nothing holds the whole input."""
    from graphnorm.inference import stream

    ckpt = write_checkpoint(tmp_path / "m" / "best.ckpt")
    csv = tmp_path / "big.csv"
    csv.write_text("smiles\n" + "\n".join(zinc_smiles * 2) + "\n")
    events = []
    real_chunks, real_rows = stream._chunks, Predictor.predict_rows

    def chunks(*a):
        for item in real_chunks(*a):
            events.append(("read", len(item[1])))
            yield item

    monkeypatch.setattr(stream, "_chunks", chunks)
    monkeypatch.setattr(Predictor, "predict_rows",
                        lambda self, s, e=None: events.append(("predict", len(s))) or real_rows(self, s, e))
    assert predict_cli(ckpt, csv, tmp_path / "out.csv", "--chunk-rows", 100) == 0
    assert events == [("read", 100), ("predict", 100)] * 6
    assert len(pd.read_csv(tmp_path / "out.csv")) == 2 * ROWS


def test_progress_lines_in_a_log_and_a_bar_on_a_terminal(tmp_path, zinc_smiles, monkeypatch, capsys):
    ckpt = write_checkpoint(tmp_path / "m" / "best.ckpt")
    csv = tmp_path / "in.csv"
    csv.write_text("smiles\n" + "\n".join(zinc_smiles[:200]) + "\n")
    assert predict_cli(ckpt, csv, tmp_path / "a.csv", "--chunk-rows", 20) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "predicted" in x]
    assert len(lines) == 10 and lines[-1].startswith("[graphnorm] predicted 200/200 rows (")
    assert "mol/s, about" in lines[0]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert predict_cli(ckpt, csv, tmp_path / "b.csv", "--chunk-rows", 20) == 0
    assert "predicting" in term.getvalue() and "200/200" in term.getvalue() and "mol/s" in term.getvalue()
