"""``--targets quantities``: one output per quantity with an offset per source, a checkpoint
that stays an ordinary linear head, and warm starts that refuse what they must."""
import json

import numpy as np
import pytest
import torch

from graphnorm.pretrain import splits
from graphnorm.pretrain.fit import train
from graphnorm.pretrain.folder import BEST_FILE, LOG_FILE
from graphnorm.train.schedule import lr_at
from graphnorm.pretrain.quantity_head import QuantityHead, exported_state, groups_of
from graphnorm.pretrain.setup import PretrainRun, PretrainSpec
from tiny_corpus import SMILES_A, SMILES_B, write_corpus

NK, PB = "netknowledge_admet", "pharmabench"
SPEC = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=4, warmup_steps=3,
                    exclude_tdc=False, val_percent=30, held_out_tasks=False,
                    targets="quantities")


def _mapped_corpus(tmp_path):
    """Two sources of logD, of solubility (PharmaBench's in log nM) and of Ames mutagenicity
    (binary), and one binary task of no quantity."""
    root = tmp_path / "admet_corpus"
    n_a, n_b = len(SMILES_A), len(SMILES_B)
    write_corpus(root, NK, SMILES_A,
                 {"lipophilicity_AZ-lipo": [0.3 * i - 1 for i in range(n_a)],
                  "solubility_EPA-sol": [-0.25 * i for i in range(n_a)],
                  "toxic": [i % 2 for i in range(n_a)]},
                 {"lipophilicity_AZ-lipo": "regression", "solubility_EPA-sol": "regression",
                  "toxic": "binary"})
    write_corpus(root, PB, SMILES_B,
                 {"logd_reg": [0.2 * i + 0.5 for i in range(n_b)],
                  "water_sol_reg": [6.0 + 0.3 * i for i in range(n_b)],
                  "ames_cls": [i % 2 for i in range(n_b)]},
                 {"logd_reg": "regression", "water_sol_reg": "regression", "ames_cls": "binary"})
    write_corpus(root, "toxric30", SMILES_A, {"Ames_Mutagenicity": [int(i % 3 == 0) for i in range(n_a)]},
                 {"Ames_Mutagenicity": "binary"})
    (root / "corpora.csv").write_text(f"corpus,rows\n{NK},{n_a}\n{PB},{n_b}\ntoxric30,{n_a}\n")
    return root


@pytest.fixture
def mapped(tmp_path, monkeypatch):
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 5)
    torch.set_num_threads(1)
    root = _mapped_corpus(tmp_path)

    def make(spec=SPEC):
        return PretrainRun(spec, root, cache=tmp_path / "cache", progress=False)
    return make


def test_groups_tie_the_sources_of_one_quantity_and_nothing_else():
    assert groups_of(["logd74", None, "logd74", "solubility", None]) == [0, 1, 0, 2, 3]


def test_sources_of_a_quantity_share_a_weight_and_differ_by_their_offsets():
    torch.manual_seed(0)
    head = QuantityHead.from_linear(torch.nn.Linear(5, 4), [0, 1, 0, 2])
    with torch.no_grad():
        head.offset.copy_(torch.tensor([0.5, 0.0, -0.5, 0.0]))
    x = torch.randn(7, 5)
    z = head(x)
    assert torch.allclose(z[:, 0] - z[:, 2], torch.ones(7))  # o_0 - o_2
    assert torch.allclose(head.to_linear()(x), z, atol=1e-6)
    z[:, 2].sum().backward()  # a label of one source teaches its quantity's shared row
    assert head.shared.weight.grad[0].abs().sum() > 0
    assert head.shared.weight.grad[1:].abs().sum() == 0


def test_a_quantity_run_pools_its_sources_in_one_unit_and_exports_a_linear_head(mapped, tmp_path):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.graph.collate import collate_graphs

    run = mapped()
    names = run.corpus.task_names
    sol = [names.index(f"{NK}/solubility_EPA-sol"), names.index(f"{PB}/water_sol_reg")]
    logd = [names.index(f"{NK}/lipophilicity_AZ-lipo"), names.index(f"{PB}/logd_reg")]
    # PharmaBench's log nM read as log mol/L (-9): both solubility sources on one scale
    values = run.corpus.value[run.corpus.task == sol[1]]
    assert np.allclose(values, [6.0 + 0.3 * i - 9.0 for i in range(len(SMILES_B))], atol=1e-5)
    assert run.groups[sol[0]] == run.groups[sol[1]] != run.groups[logd[0]] == run.groups[logd[1]]
    for pair in (sol, logd):  # one pooled mean and deviation per quantity
        assert run.scaling.mean[pair[0]] == run.scaling.mean[pair[1]]
        assert run.scaling.std[pair[0]] == run.scaling.std[pair[1]]
    assert isinstance(run.model.head, QuantityHead)
    train(run, tmp_path, 600, max_steps=4, eval_every=2, progress=False)
    assert load_checkpoint(tmp_path / BEST_FILE).task["quantities"]
    torch.save(run.graphnorm_checkpoint(4), tmp_path / "now.ckpt")  # the model as it is now
    loaded = load_checkpoint(tmp_path / "now.ckpt")
    assert isinstance(loaded.model.head, torch.nn.Linear)
    assert loaded.task["quantities"][f"{PB}/water_sol_reg"] == "solubility"
    batch = collate_graphs([run.val_set[i] for i in range(len(run.val_set))])
    run.model.eval()
    with torch.no_grad():  # the file predicts as the run
        assert torch.allclose(loaded.model(batch), run.model(batch), atol=1e-5)
    state = exported_state(run.model)
    assert state["head.weight"].shape == (len(names), run.model.head.shared.in_features)


def test_a_warm_start_copies_the_backbone_and_continues_its_schedule(mapped, tmp_path):
    from graphnorm.pretrain.cli import _steps_trained

    first = tmp_path / "first"
    first.mkdir()
    endpoints = PretrainSpec(**{**SPEC.to_dict(), "targets": "endpoints", "corpora": None})
    train(mapped(endpoints), first, 600, max_steps=4, eval_every=2, progress=False)
    steps = _steps_trained(str(first / BEST_FILE))
    assert steps in (2, 4)
    spec = PretrainSpec(**{**SPEC.to_dict(), "corpora": None, "init_from": str(first / BEST_FILE),
                           "schedule_offset": steps})
    run = mapped(spec)
    assert run.warm_start["head_rows"] == len(run.corpus.task_names) and run.warm_start["sha256"]
    before = torch.load(first / BEST_FILE, weights_only=True)["state_dict"]
    block = {k[len("model."):]: v for k, v in before.items() if ".blocks.0." in k}
    for k, v in block.items():
        assert torch.equal(run.model.state_dict()[k], v), k
    # tied rows start from the mean of the endpoint rows they replace
    names = run.corpus.task_names
    a, b = names.index(f"{NK}/lipophilicity_AZ-lipo"), names.index(f"{PB}/logd_reg")
    mean = (before["model.head.weight"][a] + before["model.head.weight"][b]) / 2
    assert torch.allclose(run.model.head.to_linear().weight[a], mean)
    out = tmp_path / "warm"
    out.mkdir()
    train(run, out, 600, max_steps=1, eval_every=1, progress=False)
    logged = json.loads((out / LOG_FILE).read_text().splitlines()[0])
    assert logged["lr"] == pytest.approx(lr_at(steps + 1, spec.lr, spec.warmup_steps))
    # a warm start of the warm start goes on from both runs' steps, not the last run's alone
    assert _steps_trained(str(out / BEST_FILE)) == steps + 1


def test_a_warm_start_that_may_have_seen_tdc_is_refused(mapped, tmp_path, monkeypatch):
    first = tmp_path / "first"
    first.mkdir()
    train(mapped(), first, 600, max_steps=2, eval_every=2, progress=False)  # kept TDC
    monkeypatch.setattr(splits, "benchmark_keys", lambda *a, **k: set())
    clean = PretrainSpec(**{**SPEC.to_dict(), "corpora": None, "exclude_tdc": True,
                            "init_from": str(first / BEST_FILE)})
    with pytest.raises(ValueError, match="TDC molecules kept .*cannot start from it"):
        mapped(clean)


def test_a_warm_start_from_another_model_is_refused_by_name(mapped, tmp_path):
    first = tmp_path / "first"
    first.mkdir()
    train(mapped(), first, 600, max_steps=2, eval_every=2, progress=False)
    wider = PretrainSpec(**{**SPEC.to_dict(), "corpora": None, "hidden": 32,
                            "init_from": str(first / BEST_FILE)})
    with pytest.raises(ValueError, match=f"{first / BEST_FILE}.*another model"):
        mapped(wider)


def test_unknown_targets_are_refused():
    with pytest.raises(ValueError, match="targets must be one of"):
        PretrainSpec(targets="columns")
    assert np.array_equal(groups_of([None, None]), [0, 1])


def test_a_quantity_run_shows_one_column_per_quantity(mapped, tmp_path, monkeypatch):
    """Its panel scores each quantity on all its sources' held-out labels, shows it on its
    largest source's scale, and folds the sources of a quantity that holds up into it."""
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import Panel
    from graphnorm.panel import build as P

    run = mapped()
    train(run, tmp_path, 600, max_steps=4, eval_every=2, progress=False)
    # every endpoint judged and shown on this tiny set, so that folding is seen
    for name, value in (("MIN_SELECT", 1), ("MIN_REPORT", 1), ("MIN_CLASS", 0),
                        ("MIN_R2", -1e9), ("MIN_AUROC", -1.0)):
        monkeypatch.setattr(P, name, value)
    panel = P.build_panel(run, tmp_path, tmp_path)
    quantities = {e.task: e for e in panel.endpoints if e.is_quantity}
    assert set(quantities) == {"quantity/logd74", "quantity/solubility", "quantity/ames"}
    assert quantities["quantity/ames"].binary and quantities["quantity/ames"].metric == "rocauc"
    sol = quantities["quantity/solubility"]
    # NK's 12 molecules against PB's 10: NK's column is the scale shown
    assert sol.output == f"{NK}/solubility_EPA-sol" and not sol.binary
    held = P.held_out_predictions(run, run.model)
    t = [run.corpus.task_names.index(f"{NK}/solubility_EPA-sol"),
         run.corpus.task_names.index(f"{PB}/water_sol_reg")]
    labelled = int((~np.isnan(held["y"][:, t])).sum())
    assert sol.n + sol.n_select == labelled  # both sources' labels, each its own offset
    sources = {e.task: e for e in panel.endpoints if not e.is_quantity}
    assert sources[f"{PB}/water_sol_reg"].quantity == "solubility"
    assert not sources[f"{PB}/water_sol_reg"].shown  # folded into its quantity
    assert sources[f"{NK}/toxic"].quantity is None
    path = panel.write(tmp_path)
    assert Panel.read(path).endpoint("quantity/solubility").output == sol.output
    frame = AdmetPanel.load(tmp_path).predict(["CCO", "c1ccccc1O"])
    assert "quantity/solubility" in frame and f"{PB}/water_sol_reg" not in frame
    both = AdmetPanel.load(tmp_path, all_endpoints=True).predict(["CCO", "c1ccccc1O"])
    assert np.allclose(both["quantity/solubility"], both[sol.output])


def test_the_card_of_a_quantity_panel_says_what_a_quantity_column_is(mapped, tmp_path,
                                                                     monkeypatch):
    from graphnorm.cli import main
    from graphnorm.panel import build as P

    run = mapped()
    run.write_records(tmp_path)
    train(run, tmp_path, 600, max_steps=2, eval_every=2, progress=False)
    for name, value in (("MIN_SELECT", 1), ("MIN_REPORT", 1), ("MIN_R2", -1e9)):
        monkeypatch.setattr(P, name, value)
    P.build_panel(run, tmp_path, tmp_path).write(tmp_path)
    assert main(["panel", "card", str(tmp_path), "--raw-dir", str(tmp_path)]) == 0
    card = (tmp_path / "MODEL_CARD.md").read_text()
    assert "quantities measured by several public sources are one column each" in card
    assert "| quantity/solubility | regression |" in card


def test_a_resumed_run_reads_the_map_it_started_with(mapped, tmp_path):
    """A source added to the map since a run started does not change that run's groups."""
    from graphnorm.pretrain.setup import recorded_quantity_map
    from graphnorm.quantities import QuantityError, sources_recorded

    run = mapped()
    run.write_records(tmp_path)
    recorded = recorded_quantity_map(tmp_path)
    assert recorded == {f"{NK}/lipophilicity_AZ-lipo": "logd74", f"{PB}/logd_reg": "logd74",
                        f"{NK}/solubility_EPA-sol": "solubility", f"{PB}/water_sol_reg": "solubility",
                        f"{PB}/ames_cls": "ames", "toxric30/Ames_Mutagenicity": "ames"}
    fewer = {k: v for k, v in recorded.items() if k != f"{PB}/logd_reg"}
    again = PretrainRun(SPEC, tmp_path / "admet_corpus", cache=tmp_path / "cache", progress=False,
                        quantity_map=fewer)
    names = again.corpus.task_names
    assert again.groups[names.index(f"{PB}/logd_reg")] != again.groups[
        names.index(f"{NK}/lipophilicity_AZ-lipo")]  # as that run was started: untied
    with pytest.raises(QuantityError, match="differently from this graphnorm's map"):
        sources_recorded({f"{PB}/logd_reg": "solubility"})
    assert recorded_quantity_map(tmp_path / "nowhere") is None


def test_a_regression_quantity_gets_one_booster_on_its_sources_labels_on_one_scale(
        mapped, tmp_path, monkeypatch):
    """`panel readouts` on a quantity run: a regression quantity's booster fits every source's
    training labels moved onto the reference source's scale by the head's offsets, is scored
    on all their held-out labels (as the head's quantity column is), and predicts the column."""
    import dataclasses

    import graphnorm.panel.readouts as R
    import graphnorm.stats.bootstrap as bootstrap
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import Panel
    from graphnorm.panel import build as P

    run = mapped(dataclasses.replace(SPEC, descriptors="fast"))
    run.write_records(tmp_path)
    train(run, tmp_path, 600, max_steps=4, eval_every=2, progress=False)
    for name, value in (("MIN_SELECT", 1), ("MIN_REPORT", 1), ("MIN_CLASS", 0),
                        ("MIN_R2", -1e9), ("MIN_AUROC", -1.0)):
        monkeypatch.setattr(P, name, value)
    P.build_panel(run, tmp_path, tmp_path).write(tmp_path)
    names = run.corpus.task_names
    ref, other = names.index(f"{NK}/solubility_EPA-sol"), names.index(f"{PB}/water_sol_reg")
    real = P.held_out_predictions

    def shifted(run, model):  # a head whose PharmaBench source sits 0.5 log units higher
        held = real(run, model)
        held["pred"][:, other] += 0.5
        return held

    fitted, margins = [], []

    def spy(*args, **kwargs):
        est = booster_estimator(*args, **kwargs)
        fit = est.fit
        est.fit = lambda x, y, **kw: (fitted.append(np.array(y)), margins.append(
            kw.get("init_score"))) and fit(x, y, **kw)
        return est

    booster_estimator = R.booster_estimator
    monkeypatch.setattr(P, "held_out_predictions", shifted)
    monkeypatch.setattr(R, "booster_estimator", spy)
    monkeypatch.setattr(bootstrap, "paired_interval", lambda *a, **k: (0.01, 0.02))  # S: booster
    from graphnorm.panel.hybrid import write_readout_panel

    write_readout_panel(run, tmp_path, progress=False)
    rows = {r["task"]: r for r in R.read_rows(tmp_path)}
    # the quantities come last, in the panel's order: logD, solubility, Ames
    sol_fit, ames_fit, ames_margin = fitted[-2], fitted[-1], margins[-1]
    # the sources folded into a shown quantity get none; a column of no quantity gets its own
    assert f"{PB}/water_sol_reg" not in rows and f"{NK}/solubility_EPA-sol" not in rows
    assert f"{NK}/toxic" in rows
    sol = rows["quantity/solubility"]
    assert sol["output"] == names[ref]  # NK's 12 molecules against PB's 10: NK's scale
    offsets = dict((n, d) for n, d in sol["sources"])
    held = shifted(run, run.model)
    assert offsets[names[ref]] == 0.0 and offsets[names[other]] > 0.4
    # the booster fitted the reference's labels as they are and PB's moved by its offset
    corpus = run.corpus
    mol_of = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    is_train = np.zeros(len(corpus), dtype=bool)
    is_train[run.corpus_rows(run.train_positions)] = True
    labels = [corpus.value[np.flatnonzero((corpus.task == t) & is_train[mol_of])] for t in (ref, other)]
    assert np.allclose(sol_fit, np.concatenate([labels[0], labels[1] - offsets[names[other]]]))
    assert margins[-2] is None  # a regression quantity moves labels, not margins
    # a binary quantity's 0/1 labels stay; each source's log-odds offset is its rows' margin
    ames = rows["quantity/ames"]
    ames_sources = [(names.index(n), d) for n, d in ames["sources"]]
    ames_labels = [corpus.value[np.flatnonzero((corpus.task == t) & is_train[mol_of])]
                   for t, _ in ames_sources]
    assert np.array_equal(ames_fit, np.concatenate(ames_labels))
    assert np.allclose(ames_margin, np.concatenate([np.full(len(v), d) for v, (_, d)
                                                    in zip(ames_labels, ames_sources)]))
    assert dict(ames["sources"])[ames["output"]] == 0.0 and np.any(ames_margin)
    labelled = int(sum((~np.isnan(held["y"][:, t])).sum() for t in (ref, other)))
    assert sol["select"]["n"] + sol["report"]["n"] == labelled  # every source's held-out label
    assert sol["n_train"] == len(sol_fit)
    entry = Panel.read(tmp_path).endpoint("quantity/solubility")
    assert entry.by_booster and entry.output == names[ref] and entry.n + entry.n_select == labelled
    loaded = AdmetPanel.load(tmp_path)
    smiles = ["CCO", "c1ccccc1O", "CCCCN"]
    frame = loaded.predict(smiles)
    graphs, _ = loaded.predictor.featurize(smiles)
    view = loaded.view(graphs, smiles)
    expected = np.empty(len(smiles))
    expected[view.rows] = loaded.boosters.predict(view)["quantity/solubility"]
    assert np.allclose(frame["quantity/solubility"], expected)  # on the reference's scale
    # against one gbm on the same pooled labels, on R: the head's side is the column's score
    from graphnorm.panel import versus_gbm as V

    monkeypatch.setattr(P, "held_out_predictions", real)  # the head as it is: no shift here
    V.versus_gbm(run, tmp_path, threads=1, cache=tmp_path / "cache", progress=False)
    judged = {r["task"]: r for r in V.read_rows(tmp_path)}
    for name in ("quantity/solubility", "quantity/ames"):  # binary: its gbm starts from margins
        head_says = Panel.read(tmp_path / "panel.head.json").endpoint(name)
        assert judged[name]["backbone"] == pytest.approx(head_says.score, abs=1e-6)
        assert judged[name]["n_report"] == head_says.n and np.isfinite(judged[name]["single_table"])
    # the refit (the same recipe on every row) fits it again on all its sources' labels,
    # moved by the held build's offsets (the scale its column was chosen and scored on)
    from graphnorm.panel import boosters as B
    from graphnorm.panel.refit import refit_panel

    every = mapped(dataclasses.replace(SPEC, descriptors="fast", val_percent=0, seed=1))
    refit = tmp_path / "refit"
    refit.mkdir()
    every.write_records(refit)
    train(every, refit, 600, max_steps=4, eval_every=2, progress=False)
    fitted.clear()
    monkeypatch.setattr(B, "booster_estimator", spy)
    refit_panel(tmp_path, every, refit, progress=False)
    every_label = [corpus.value[corpus.task == t] for t in (ref, other)]
    assert any(len(y) == sum(map(len, every_label)) and np.allclose(
        y, np.concatenate([every_label[0], every_label[1] - offsets[names[other]]])) for y in fitted)
    assert np.isfinite(AdmetPanel.load(refit).predict(smiles)["quantity/solubility"]).all()
