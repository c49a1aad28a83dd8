"""A tiny pre-training run end to end: held-out scores logged, exact resume, a checkpoint
that `load_checkpoint` and ``train --init-from`` read, benchmark molecules left out."""
import json

import numpy as np
import pytest
import torch

from graphnorm.pretrain import splits
from graphnorm.pretrain.corpus import loose_key
from graphnorm.pretrain.fit import train
from graphnorm.pretrain.folder import BEST_FILE, LOG_FILE, STATE_FILE
from graphnorm.pretrain.setup import PretrainRun, PretrainSpec

SPEC = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                    exclude_tdc=False, val_percent=30)


@pytest.fixture
def make_run(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 5)  # the tiny tasks are held out too
    torch.set_num_threads(1)

    def make(spec=SPEC):
        return PretrainRun(spec, tiny_corpus, cache=tmp_path / "cache", progress=False)
    return make


def test_run_logs_held_out_scores_and_resumes_exactly(make_run, tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    for out in (straight, resumed):
        out.mkdir()
    run = make_run()
    assert run.held_tasks and not run.scaling.trained[run.held_tasks].any()
    last = train(run, straight, 600, max_steps=8, eval_every=4, progress=False)
    records = [json.loads(line) for line in (straight / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in records] == [4, 8] and last["step"] == 8
    assert {"val_loss", "probe", "cpu_s", "wall_s", "seen"} <= set(records[-1])
    assert records[-1]["seen"] == 8 * SPEC.batch_size or records[-1]["epoch"] > 0
    assert (straight / BEST_FILE).is_file()

    train(make_run(), resumed, 600, max_steps=5, eval_every=4, progress=False)
    state = torch.load(resumed / STATE_FILE, weights_only=False)
    assert state["global_step"] == 5
    # a limit between evaluations still ends with a held-out score of the last step
    logged = [json.loads(line)["step"] for line in (resumed / LOG_FILE).read_text().splitlines()]
    assert logged == [4, 5]
    train(make_run(), resumed, 600, max_steps=8, eval_every=4, progress=False)
    a = torch.load(straight / STATE_FILE, weights_only=False)["state_dict"]
    b = torch.load(resumed / STATE_FILE, weights_only=False)["state_dict"]
    assert a.keys() == b.keys()
    for k in a:  # the same batches in the same order, the same optimizer state
        assert torch.equal(a[k], b[k]), k


def test_best_checkpoint_starts_a_fine_tuning_run(make_run, tmp_path):
    import dataclasses

    from graphnorm.chem import FeaturizerConfig
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.models import build_model
    from graphnorm.pretrain.setup import model_config
    from graphnorm.train.init_from import init_from_checkpoint

    run = make_run()
    train(run, tmp_path, 600, max_steps=4, eval_every=2, progress=False)
    loaded = load_checkpoint(tmp_path / BEST_FILE)
    assert loaded.task["kinds"] == run.corpus.task_kinds
    assert loaded.model.head.out_features == run.corpus.num_tasks
    # a fine-tuning run of one target, with RDKit descriptors at its head
    featurizer = FeaturizerConfig(descriptors=True)
    config = dict(model_config(SPEC, 1, dataclasses.replace(featurizer, descriptors=False)))
    config.update(model_config(SPEC, 1, featurizer))
    model = build_model(config)
    record = init_from_checkpoint(model, config, featurizer, tmp_path / BEST_FILE)
    assert record["added_at_head"] == ["descriptors"]
    block = model.blocks[0].state_dict()
    for k, v in block.items():
        assert torch.equal(v, loaded.model.blocks[0].state_dict()[k]), k


def test_benchmark_molecules_never_reach_training(make_run, monkeypatch):
    excluded = {loose_key("CCO"), loose_key("c1ccncc1")}
    monkeypatch.setattr(splits, "benchmark_keys", lambda *a, **k: excluded)
    run = make_run(PretrainSpec(**{**SPEC.to_dict(), "exclude_tdc": True, "corpora": None}))
    assert run.sizes["excluded_tdc"] == 2
    seen = set()
    for dataset in (run.train_set, run.val_set, run.probe_set):
        seen |= {loose_key(dataset[i].smiles) for i in range(len(dataset))}
    assert not seen & excluded and len(seen) == 21 - 2


def test_corpus_rows_name_the_molecules_each_split_holds(make_run):
    run = make_run()
    train = run.corpus_rows(run.train_positions)
    held = run.corpus_rows(run.held_out_positions)
    assert not set(train.tolist()) & set(held.tolist())
    assert {run.corpus.smiles[r] for r in train} == {run.train_set[i].smiles
                                                      for i in range(len(run.train_set))}


def test_a_corpus_too_small_to_split_is_refused(make_run):
    with pytest.raises(ValueError, match="too few"):  # no tiny-corpus scaffold in bucket 0
        make_run(PretrainSpec(**{**SPEC.to_dict(), "val_percent": 1, "corpora": None}))


def test_cli_trains_resumes_refuses_other_settings_and_reports(tiny_corpus, tmp_path,
                                                              monkeypatch):
    from graphnorm.cli import main

    monkeypatch.setattr(splits, "HELD_TASK_MIN", 5)
    monkeypatch.setenv("GRAPHNORM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    base = ["pretrain", "--out", str(out), "--raw-dir", str(tiny_corpus), "--keep-tdc",
            "--quiet", "--eval-every", "2"]
    size = ["--num-layers", "1", "--hidden", "16", "--ffn-hidden", "16", "--batch-size", "4"]
    assert main(base + size + ["--max-steps", "2"]) == 0
    assert json.loads((out / "pretrain.json").read_text())["hidden"] == 16
    data = json.loads((out / "data.json").read_text())
    assert data["tasks"] == 4 and data["sizes"]["excluded_tdc"] == 0
    assert main(base + ["--max-steps", "4"]) == 0  # continued: the folder's settings
    assert len((out / LOG_FILE).read_text().splitlines()) == 2
    assert main(base + ["--hidden", "32", "--max-steps", "6"]) == 2  # another run: refused
    assert main(base + ["--patience", "0", "--max-steps", "6"]) == 2  # K >= 1
    report = tmp_path / "report"
    assert main(["pretrain", "curve", str(out), "--out", str(report)]) == 0
    table = (report / "curve.md").read_text()
    assert "sep:bn+bn 1x16" in table and table.count("\n") == 4
    assert (report / "curve.png").stat().st_size > 1000
    assert main(["pretrain", "curve", str(tmp_path), "--out", str(report)]) == 2


def test_a_corrupt_or_foreign_state_is_named(make_run, tmp_path):
    from graphnorm.pretrain.fit import ResumeError

    (tmp_path / STATE_FILE).write_bytes(b"not a torch file")
    with pytest.raises(ResumeError, match="corrupt"):
        train(make_run(), tmp_path, 600, max_steps=1, eval_every=1, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    train(make_run(), other, 600, max_steps=1, eval_every=5, progress=False)
    wider = PretrainSpec(**{**SPEC.to_dict(), "hidden": 32, "corpora": None})
    with pytest.raises(ResumeError, match="another model"):
        train(make_run(wider), other, 600, max_steps=2, eval_every=5, progress=False)
    old = tmp_path / "old"  # a run of the loop before the one training stack
    old.mkdir()
    (old / "state.pt").write_bytes(b"")
    with pytest.raises(ResumeError, match="state.pt.*--init-from"):
        train(make_run(), old, 600, max_steps=1, eval_every=1, progress=False)


def test_a_call_writes_the_run_record(make_run, tmp_path):
    from graphnorm.run_folder import RunRecord

    train(make_run(), tmp_path, 600, max_steps=6, eval_every=3, progress=False)
    record = RunRecord.read(tmp_path)
    losses = [json.loads(line)["val_loss"] for line in (tmp_path / LOG_FILE).read_text().splitlines()]
    assert record.metric == "loss" and record.val == pytest.approx(min(losses))
    assert record.test is None and record.steps == 6 and record.stopped_by == "max_steps"
    assert record.cpu_time_s > 0 and record.config["hidden"] == SPEC.hidden
    assert 6 <= record.extra["seen"] <= 6 * SPEC.batch_size  # molecules: a short last batch


def test_a_sigterm_ends_the_step_saves_and_resumes(make_run, tmp_path, monkeypatch, capsys):
    import os
    import signal

    from graphnorm.pretrain import held_out
    from graphnorm.run_folder import RunRecord

    batch_end = held_out.HeldOutLog.on_train_batch_end

    def terminated_at_step_3(self, trainer, *args):
        if trainer.global_step == 3:
            os.kill(os.getpid(), signal.SIGTERM)  # as `kill` or a scheduler would
        batch_end(self, trainer, *args)

    monkeypatch.setattr(held_out.HeldOutLog, "on_train_batch_end", terminated_at_step_3)
    before = signal.getsignal(signal.SIGTERM)
    last = train(make_run(), tmp_path, 600, max_steps=8, eval_every=2, progress=False)
    assert last["stopped_at"] == 3
    assert torch.load(tmp_path / STATE_FILE, weights_only=False)["global_step"] == 3
    assert RunRecord.read(tmp_path).stopped_by == "signal"
    logged = [json.loads(line)["step"] for line in (tmp_path / LOG_FILE).read_text().splitlines()]
    assert logged == [2]  # a signal does not wait for a held-out score
    assert signal.getsignal(signal.SIGTERM) == before  # the call's handler is gone with it
    monkeypatch.undo()
    train(make_run(), tmp_path, 600, max_steps=4, eval_every=2, progress=True)
    assert f"resuming {tmp_path} at step 3" in capsys.readouterr().err
    assert torch.load(tmp_path / STATE_FILE, weights_only=False)["global_step"] == 4


def test_patience_stops_after_k_evaluations_without_a_better_loss_across_calls(
        make_run, tmp_path, monkeypatch):
    from graphnorm.pretrain import evaluate
    from graphnorm.run_folder import RunRecord

    losses = iter([1.0, 0.9, 0.95, 0.93, 0.7])  # one per evaluation

    def scripted(run, model, probe):
        return {"val_loss": next(losses)}

    monkeypatch.setattr(evaluate, "held_out_record", scripted)
    # the first call ends at step 3 after one evaluation without a better loss (0.95) ...
    first = train(make_run(), tmp_path, 600, max_steps=3, eval_every=1, progress=False,
                  patience=2)
    assert first["stopped_by"] == "max_steps"
    # ... and the next call counts on from there: 0.93 is the second
    last = train(make_run(), tmp_path, 600, max_steps=20, eval_every=1, progress=False,
                 patience=2)
    assert (last["stopped_at"], last["stopped_by"]) == (4, "patience")
    assert RunRecord.read(tmp_path).stopped_by == "patience"
    assert RunRecord.read(tmp_path).val == 0.9
    assert torch.load(tmp_path / BEST_FILE, weights_only=False)["epoch"] == 2  # 0.9's step
    # a run out of patience takes no further step when called again
    again = train(make_run(), tmp_path, 600, max_steps=20, eval_every=1, progress=False,
                  patience=2)
    assert again["stopped_at"] == 4
    assert len((tmp_path / LOG_FILE).read_text().splitlines()) == 4
    # without patience the same run goes on (the limit is the call's, not the run's)
    on = train(make_run(), tmp_path, 600, max_steps=5, eval_every=1, progress=False)
    assert on["stopped_at"] == 5 and RunRecord.read(tmp_path).val == 0.7


def test_held_out_tasks_are_probed_every_kth_evaluation(make_run, tmp_path):
    train(make_run(), tmp_path, 600, max_steps=6, eval_every=2, progress=False, probe_every=3)
    records = [json.loads(line) for line in (tmp_path / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in records] == [2, 4, 6]
    assert ["probe" in r for r in records] == [False, False, True]
    assert all("val_loss" in r for r in records)


def test_the_shipped_spec_trains_every_task_and_logs_no_probe(make_run, tmp_path):
    every = PretrainSpec(**{**SPEC.to_dict(), "held_out_tasks": False, "corpora": None})
    run = make_run(every)
    assert run.held_tasks == [] and run.scaling.trained.all() and not len(run.probe_set)
    train(run, tmp_path, 600, max_steps=2, eval_every=2, progress=False)
    record = json.loads((tmp_path / LOG_FILE).read_text().splitlines()[-1])
    assert "val_loss" in record and "probe" not in record
    # an older run's pretrain.json (no such field) reads as the held-out default
    old = {k: v for k, v in SPEC.to_dict().items() if k != "held_out_tasks"}
    assert PretrainSpec.from_dict(old).held_out_tasks is True


def test_the_cli_flags_name_the_shipped_settings_and_a_resume_must_repeat_them(tmp_path):
    import argparse

    from graphnorm.pretrain.cli import add_pretrain_args, spec_from_args

    p = argparse.ArgumentParser()
    add_pretrain_args(p)
    spec = spec_from_args(p.parse_args(["--out", "x", "--train-every-task", "--val-percent", "15"]))
    assert spec.held_out_tasks is False and spec.val_percent == 15
    assert "0 trains every row" in p.format_help()  # what a percent of 0 means, in --help
    assert spec_from_args(p.parse_args(["--out", "x"])).held_out_tasks is True
    assert spec_from_args(p.parse_args(["--out", "x", "--descriptors", "fast"])).descriptors == "fast"
    assert spec_from_args(p.parse_args(["--out", "x", "--descriptors", "rdkit2d"])).descriptors is True
    assert spec_from_args(p.parse_args(["--out", "x"])).descriptors is False
    # budgets are written as train's --max-time is
    for text, seconds in (("2h40m", 9600), ("90m", 5400), ("01:30:00", 5400), ("45", 45)):
        assert p.parse_args(["--out", "x", "--max-time", text]).max_time == seconds
    with pytest.raises(SystemExit):
        p.parse_args(["--out", "x", "--max-time", "2 hours"])


def test_a_run_with_descriptors_standardizes_them_and_its_checkpoint_predicts(make_run, tmp_path):
    import dataclasses

    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.graph.collate import collate_graphs

    spec = dataclasses.replace(SPEC, descriptors="fast")
    run = make_run(spec)
    encoder = run.model.descriptors
    assert run.featurizer.descriptors == "fast" and encoder.count > 50
    assert encoder.std.ne(1).any() and encoder.mean.ne(0).any()  # fitted on training molecules
    out = tmp_path / "desc"
    out.mkdir()
    train(run, out, 600, max_steps=4, eval_every=2, progress=False)
    loaded = load_checkpoint(out / BEST_FILE)
    assert loaded.featurizer.descriptors == "fast"
    batch = collate_graphs([run.val_set[i] for i in range(len(run.val_set))])
    z = loaded.model.eval()(batch)
    assert z.shape == (len(run.val_set), run.corpus.num_tasks) and torch.isfinite(z).all()
    # fine-tuning from it: --recipe admet's full set replaces the fast one at the head, or a
    # run without descriptors leaves them out; the blocks load either way
    from graphnorm.chem import FeaturizerConfig
    from graphnorm.models import build_model
    from graphnorm.pretrain.setup import model_config
    from graphnorm.train.init_from import init_from_checkpoint

    for descriptors in (True, False):
        featurizer = FeaturizerConfig(descriptors=descriptors)
        config = model_config(dataclasses.replace(SPEC, descriptors=descriptors), 1, featurizer)
        model = build_model(config)
        record = init_from_checkpoint(model, config, featurizer, out / BEST_FILE)
        assert record["added_at_head"] == ["descriptors"]
        for k, v in model.blocks[0].state_dict().items():
            assert torch.equal(v, loaded.model.blocks[0].state_dict()[k]), k


def test_progress_lines_come_between_evaluations(make_run, tmp_path, monkeypatch, capsys):
    from graphnorm.pretrain import held_out

    monkeypatch.setattr(held_out, "PROGRESS_EVERY", 2)
    train(make_run(), tmp_path, 600, max_steps=6, eval_every=6, progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if "train loss" in line]
    assert [line.split(":")[0] for line in lines] == [
        "[graphnorm pretrain] step 2", "[graphnorm pretrain] step 4", "[graphnorm pretrain] step 6"]
    assert "held-out scores at step 6" in lines[0] and "CPU-h" in lines[0]


def test_training_without_a_run_folder_is_refused_by_name(capsys):
    from graphnorm.cli import main

    assert main(["pretrain", "--max-time", "1m"]) == 2
    assert "--out RUN is required" in capsys.readouterr().err


def test_a_run_that_holds_nothing_out_trains_every_row(make_run, tmp_path):
    from graphnorm.panel.build import held_out_predictions
    from graphnorm.run_folder import RunRecord

    held = make_run()
    every = make_run(PretrainSpec(**{**SPEC.to_dict(), "val_percent": 0, "corpora": None}))
    assert every.sizes["val"] == 0 and len(every.held_out_positions) == 0
    assert every.sizes["train"] == held.sizes["train"] + len(held.held_out_positions)
    train(every, tmp_path, 600, max_steps=4, eval_every=2, progress=False)
    records = [json.loads(line) for line in (tmp_path / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in records] == [2, 4] and not any("val_loss" in r for r in records)
    best = torch.load(tmp_path / BEST_FILE, weights_only=True)
    assert best["epoch"] == 4  # the latest model: nothing held out to choose another
    assert RunRecord.read(tmp_path).val is None
    with pytest.raises(ValueError, match="holds no molecule out"):
        held_out_predictions(every, every.model)
    with pytest.raises(ValueError, match="val_percent must be in"):
        PretrainSpec(val_percent=100)


def test_a_left_out_source_is_never_read(make_run):
    """--leave-out: the source's labels are gone from training and held-out scoring alike;
    molecules only it measured are not trained on; an unknown source is named."""
    from graphnorm.pretrain.corpus import CorpusError

    full = make_run()
    out = make_run(PretrainSpec(**{**SPEC.to_dict(), "corpora": None, "leave_out": ["alpha/logS"]}))
    t = out.corpus.task_names.index("alpha/logS")
    assert out.corpus.labels_per_task()[t] == 0 and full.corpus.labels_per_task()[t] > 0
    assert not out.scaling.trained[t]
    others = np.delete(np.arange(out.corpus.num_tasks), t)
    assert (out.corpus.labels_per_task()[others] == full.corpus.labels_per_task()[others]).all()
    for positions in (out.train_positions, out.held_out_positions):
        rows = out.corpus_rows(positions)
        assert (np.diff(out.corpus.indptr)[rows] > 0).all()  # a label left to learn from
    assert out.spec.leave_out == ("alpha/logS",)
    with pytest.raises(CorpusError, match="no task 'alpha/nope'"):
        make_run(PretrainSpec(**{**SPEC.to_dict(), "corpora": None, "leave_out": ["alpha/nope"]}))


def test_the_loader_computes_the_random_walk_pe_the_model_would(make_run):
    from graphnorm.graph.structural import random_walk_pe
    from graphnorm.pretrain.datamodule import CorpusDataModule

    run = make_run()
    steps = run.model_config["rwpe_steps"]
    assert steps > 0  # the shipped backbone's shape: the PE is part of it
    module = CorpusDataModule(run)
    batch, labels = module.collate([run.train_set[i] for i in range(6)])
    assert batch.rwpe is not None and labels.shape[0] == 6
    torch.testing.assert_close(batch.rwpe, random_walk_pe(batch, steps))
    # every training molecule's PE is kept for the next epochs, however large the corpus
    assert module._collate_graphs.max_graphs == len(run.train_set)
    everyone = [run.train_set[i] for i in range(len(run.train_set))]
    module.collate(everyone)
    assert len(module._collate_graphs.memo) == len({g.smiles for g in everyone})


def test_the_corpus_line_says_whether_tdc_molecules_were_kept(tiny_corpus, tmp_path, capsys,
                                                             monkeypatch):
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 5)
    PretrainRun(SPEC, tiny_corpus, cache=tmp_path / "cache", progress=True)
    said = capsys.readouterr()
    line = next(t for t in (said.out + said.err).splitlines() if "molecules kept" in t)
    assert "TDC molecules kept (--keep-tdc)" in line and "0 TDC molecules" not in line


def test_the_last_line_says_whether_the_run_is_complete(tmp_path):
    from graphnorm.pretrain.cli import stop_message

    def said(by):
        return stop_message({"stopped_at": 10, "stopped_by": by}, tmp_path, 3)

    assert "continue with the same command" in said("signal")
    assert "continue with the same command" in said("max_time")
    for done in ("patience", "max_steps"):
        assert "continue" not in said(done) and str(tmp_path / "best.ckpt") in said(done)
