"""`graphnorm panel versus-gbm`: the backbone against one gbm per endpoint, on the
report half of the held-out scaffolds, resumable."""
import copy
import json
import shutil

import numpy as np
import pytest

from tiny_panel import make_tiny_panel


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_panel(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def judged_panel(tiny, tmp_path):
    """A copy of the tiny run, its regression endpoint marked judged (the tiny panel judges
    none); its corpus folder beside it, as the CLI reads it."""
    folder, run, panel = tiny
    shutil.copytree(folder, tmp_path / "run")
    shutil.copytree(folder.parent / "admet_corpus", tmp_path / "admet_corpus")
    panel = copy.deepcopy(panel)
    for e in panel["endpoints"]:
        e["judged"] = e["task"] == "alpha/logS"
    (tmp_path / "run" / "panel.json").write_text(json.dumps(panel))
    return tmp_path / "run", run, panel


def test_each_judged_endpoint_is_set_against_a_gbm_on_its_training_molecules(judged_panel,
                                                                              tmp_path, monkeypatch):
    from graphnorm.panel import versus_gbm as V

    out, run, panel = judged_panel
    path = V.versus_gbm(run, out, threads=1, cache=tmp_path / "cache", progress=False)
    rows = V.read_rows(out)
    assert [r["task"] for r in rows] == ["alpha/logS"]
    row = rows[0]
    logs = next(e for e in panel["endpoints"] if e["task"] == "alpha/logS")
    assert row["backbone"] == pytest.approx(logs["score"], abs=1e-6)  # the panel's own R score
    corpus, t = run.corpus, run.corpus.task_names.index("alpha/logS")
    mol_of = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    train_rows = set(run.corpus_rows(run.train_positions).tolist())
    expect = sum(1 for m, task in zip(mol_of, corpus.task) if task == t and m in train_rows)
    assert row["n_train"] == expect > 0  # the endpoint's training molecules, nothing held out
    assert np.isfinite(row["single_table"]) and row["diff_lo"] <= row["diff_hi"]
    assert row["verdict"] == ("backbone" if row["diff_lo"] > 0 else
                              "single_table" if row["diff_hi"] < 0 else "tied")
    assert "1 of 1 judged endpoints done" in path.read_text()
    assert list((tmp_path / "cache").glob("versus_gbm/maplight-*/*.npy"))  # features cached

    # resumable: a rerun fits nothing again
    import graphnorm.baselines.boosted as boosted

    monkeypatch.setattr(boosted, "boosted_trees", lambda *a, **k: pytest.fail("refitted"))
    V.versus_gbm(run, out, threads=1, cache=tmp_path / "cache", progress=False)
    assert len(V.read_rows(out)) == 1


def test_a_panel_of_another_checkpoint_or_none_is_named(judged_panel, tmp_path):
    from graphnorm.panel import versus_gbm as V

    out, run, panel = judged_panel
    for e in panel["endpoints"]:
        e["score"] = 0.99 if e["judged"] else e["score"]
    (out / "panel.json").write_text(json.dumps(panel))
    with pytest.raises(RuntimeError, match="not\\s+this best.ckpt's panel"):
        V.versus_gbm(run, out, cache=tmp_path / "cache", progress=False)
    (out / "panel.json").unlink()
    with pytest.raises(FileNotFoundError, match="graphnorm panel build"):
        V.versus_gbm(run, out, progress=False)


def test_the_cli_runs_it_on_a_run_folder(judged_panel, tmp_path, monkeypatch, capsys):
    from graphnorm.cli import main
    from graphnorm.pretrain import splits

    out, run, _ = judged_panel
    monkeypatch.setenv("GRAPHNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(splits, "HELD_TASK_MIN", 100)  # as the tiny run was built
    raw = tmp_path / "admet_corpus"
    assert main(["panel", "versus-gbm", str(out), "--raw-dir", str(raw.parent), "--quiet"]) == 0
    assert "head better" in capsys.readouterr().out
    assert (out / "versus_gbm.md").is_file()
    assert main(["panel", "versus-gbm", str(tmp_path / "nowhere")]) == 2
    assert "not a trained pre-training run" in capsys.readouterr().err


def test_the_summary_sets_the_predictor_the_panel_ships_against_the_gbm():
    """The verdict is the head's; the "panel" columns take a booster's R score where one
    predicts the endpoint, and which endpoints are shown comes from the panel as it stands."""
    from graphnorm.panel import BLEND, BOOSTER
    from graphnorm.panel.record import Endpoint
    from graphnorm.panel.versus_gbm import summarize

    def endpoint(task, score, shown, readout=None):
        return Endpoint(task=task, kind="regression", units="", n_select=50, n=50, judged=True,
                        metric="r2", score_select=score, score=score, shown=shown,
                        readout=readout)

    rows = [{"task": f"a/{k}", "backbone": 0.2, "single_table": 0.4, "verdict": "single_table",
             "shown": False} for k in range(3)]
    panel = {"a/0": endpoint("a/0", 0.5, True, BOOSTER),  # a booster above the gbm
             "a/1": endpoint("a/1", 0.2, True),  # the head, below it
             "a/2": endpoint("a/2", 0.2, False, BLEND)}
    table = {line.split(" | ")[0]: line.split(" | ")[1:] for line in
             summarize(rows, 3, panel).splitlines() if line.startswith("| ")}
    n, head_better, gbm_better, tied, head_higher, _, panel_higher, median = table["| all done"]
    assert (n, gbm_better, head_higher, panel_higher) == ("3", "3", "0", "1")
    shown = table["| shown in the panel"]
    assert (shown[0], shown[6]) == ("2", "1")  # rows said not shown; the panel shows two
    assert "a one-table booster for 1 of these endpoints, the mean of the head and a booster " \
           "for 1, a related column for 0, else the head" in summarize(rows, 3, panel)
    # without the panel: its columns are the head's, the rows' shown flags stand
    bare = {line.split(" | ")[0]: line.split(" | ")[1:] for line in
            summarize(rows, 3).splitlines() if line.startswith("| ")}
    assert bare["| all done"][6] == "0" and bare["| shown in the panel"][0] == "0"
