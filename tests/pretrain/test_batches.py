"""How a pre-training run draws and makes its batches: loader processes change nothing but
who makes them, and square-root task balancing favours the molecules of small tasks."""
import dataclasses

import numpy as np
import pytest
import torch

from graphnorm.pretrain import splits
from graphnorm.pretrain.corpus import Corpus
from graphnorm.pretrain.fit import train
from graphnorm.pretrain.folder import STATE_FILE
from graphnorm.pretrain.setup import PretrainRun, PretrainSpec, task_balanced_weights

SPEC = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                    exclude_tdc=False, val_percent=30)


@pytest.fixture
def make_run(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 5)
    torch.set_num_threads(1)

    def make(spec=SPEC):
        return PretrainRun(spec, tiny_corpus, cache=tmp_path / "cache", progress=False)
    return make


def _model(out):
    return torch.load(out / STATE_FILE, weights_only=False)["state_dict"]


def test_loader_processes_train_the_same_model_and_resume_exactly(make_run, tmp_path):
    here, workers, resumed = (tmp_path / n for n in ("here", "workers", "resumed"))
    for out in (here, workers, resumed):
        out.mkdir()
    train(make_run(), here, 600, max_steps=9, eval_every=4, progress=False)
    train(make_run(), workers, 600, max_steps=9, eval_every=4, progress=False, loader_workers=2)
    train(make_run(), resumed, 600, max_steps=5, eval_every=4, progress=False, loader_workers=2)
    train(make_run(), resumed, 600, max_steps=9, eval_every=4, progress=False, loader_workers=1)
    a, b, c = _model(here), _model(workers), _model(resumed)
    for k in a:
        assert torch.equal(a[k], b[k]) and torch.equal(a[k], c[k]), k


def test_task_balancing_weighs_a_molecule_by_its_smallest_trained_task():
    # task 0 labels 5 molecules, task 1 one (also in task 0), task 2 is held out (not trained)
    indptr = np.array([0, 1, 2, 3, 5, 6, 7])
    task = np.array([0, 0, 0, 0, 1, 2, 0])
    corpus = Corpus([f"C{'C' * i}" for i in range(6)], ["a", "b", "c"],
                    ["regression"] * 3, indptr, task, np.ones(len(task)), {})
    trained = np.array([True, True, False])
    w = task_balanced_weights(corpus, np.arange(6), trained, floor=1)
    small = 5 ** -0.5
    np.testing.assert_allclose(w, [small, small, small, 1.0, 0.0, small])
    # the rows given are the training molecules: counts come from them alone
    np.testing.assert_allclose(task_balanced_weights(corpus, np.array([3, 4]), trained,
                                                     floor=1), [1, 0])
    # below the floor a task counts as floor-sized: the 1-label task no longer dominates
    np.testing.assert_allclose(task_balanced_weights(corpus, np.arange(6), trained, floor=4),
                               [small, small, small, 0.5, 0.0, small])


def test_task_sampling_draws_with_replacement_and_resumes_exactly(make_run, tmp_path):
    spec = dataclasses.replace(SPEC, sampling="task")
    run = make_run(spec)
    order = run.permutation(0)
    assert len(order) == len(run.train_set) and len(np.unique(order)) < len(order)
    assert np.array_equal(order, make_run(spec).permutation(0))  # drawn the same on resume
    assert not np.array_equal(order, run.permutation(1))
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    for out in (straight, resumed):
        out.mkdir()
    train(make_run(spec), straight, 600, max_steps=8, eval_every=4, progress=False)
    train(make_run(spec), resumed, 600, max_steps=5, eval_every=4, progress=False)
    train(make_run(spec), resumed, 600, max_steps=8, eval_every=4, progress=False)
    a, b = _model(straight), _model(resumed)
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_an_unknown_sampling_is_refused():
    with pytest.raises(ValueError, match="sampling must be one of"):
        PretrainSpec(sampling="balanced")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_a_device_this_machine_lacks_is_named_before_the_corpus_loads(tmp_path, capsys):
    from graphnorm.cli import main

    base = ["pretrain", "--out", str(tmp_path / "run"), "--raw-dir", str(tmp_path / "none")]
    assert main(base + ["--device", "cuda"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert main(base + ["--device", "gpu0"]) == 2
    assert "not a torch device" in capsys.readouterr().err
    assert main(base + ["--loader-workers", "-1"]) == 2
    assert "--loader-workers must be >= 0" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
