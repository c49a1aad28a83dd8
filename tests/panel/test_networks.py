"""A panel of several networks (graphnorm/panel/networks.py): one recipe's runs by seed,
assembled with `graphnorm panel ensemble`, averaged everywhere the panel predicts."""
import json
import shutil

import numpy as np
import pytest
import torch

from tiny_panel import make_tiny_panel, train_tiny_member

SMILES = ["CCO", "c1ccccc1O", "CC(=O)N", "not a smiles", "CCCl"]


@pytest.fixture
def members(tmp_path):
    """(first run with its panel built, a second run of its recipe with seed 1, the run)."""
    first, run, _ = make_tiny_panel(tmp_path)
    return first, train_tiny_member(tmp_path, run, seed=1), run


@pytest.fixture
def ensemble(members, tmp_path):
    """An assembled ensemble folder with its panel built (`panel ensemble`, `panel build`)."""
    from graphnorm.cli import main

    first, second, _ = members
    out = tmp_path / "ensemble"
    assert main(["panel", "ensemble", str(out), str(first), str(second)]) == 0
    assert main(["panel", "build", str(out), "--raw-dir", str(tmp_path), "--quiet"]) == 0
    return out


def test_the_mean_of_networks_averages_outputs_and_puts_embeddings_side_by_side(members):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.graph.collate import collate_graphs
    from graphnorm.inference.predict import Predictor
    from graphnorm.panel.networks import NetworkMean

    first, second, _ = members
    a, b = load_checkpoint(first / "best.ckpt"), load_checkpoint(second / "best.ckpt")
    graphs, _ = Predictor(a).featurize(["CCO", "c1ccccc1O"], ["", ""])
    batch = collate_graphs([g for _, g in graphs])
    mean = NetworkMean([a.model, b.model]).eval()
    with torch.no_grad():
        pred, emb = mean(batch, return_embeddings=True)
        (pa, ea), (pb, eb) = a.model(batch, True), b.model(batch, True)
        assert not torch.allclose(pa, pb)  # two seeds: two different networks
        assert torch.allclose(pred, (pa + pb) / 2)
        assert torch.allclose(mean(batch), pred)
        assert torch.equal(emb.vnode, torch.cat([ea.vnode, eb.vnode], -1))
        assert emb.tokens.shape[-1] == 2 * ea.tokens.shape[-1]


def test_an_ensembles_panel_predicts_the_members_mean(members, ensemble, tmp_path):
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import Panel
    from graphnorm.panel.build import build_panel

    first, second, run = members
    panel = Panel.read(ensemble)
    assert len(panel.member_sha256) == 2 and panel.member_sha256[0] == panel.checkpoint_sha256
    recorded = json.loads((ensemble / "members.json").read_text())["members"]
    assert [m["seed"] for m in recorded] == [0, 1]
    assert [m["sha256"] for m in recorded] == panel.member_sha256
    from graphnorm.pretrain.folder import best_evaluation, read_log

    for m, folder in zip(recorded, (first, second)):  # the step its best.ckpt was written at
        log = read_log(folder)
        assert m["step"] == min(log, key=lambda r: r["val_loss"])["step"]
        assert best_evaluation(log)["step"] == m["step"] and best_evaluation([]) == {}
    build_panel(run, second, tmp_path).write(second)  # the second member's own panel
    ours = AdmetPanel.load(ensemble, all_endpoints=True).predict(SMILES)
    alone = [AdmetPanel.load(f, all_endpoints=True).predict(SMILES) for f in (first, second)]
    regression = [e.task for e in panel.endpoints if not e.binary]
    assert regression  # the tiny corpus's logS
    for task in regression:  # in its unit: the mean of the members' values
        expected = (alone[0][task] + alone[1][task]) / 2
        assert np.allclose(ours[task], expected, equal_nan=True)
    assert ours["error"].tolist() == alone[0]["error"].tolist()
    assert ours["error"][3] and np.isnan(ours[regression[0]][3])


def test_a_member_swapped_or_lost_is_refused_by_name(members, ensemble):
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    first, _, _ = members
    kept = ensemble.parent / "member_1.kept"
    shutil.copyfile(ensemble / "member_1.ckpt", kept)
    shutil.copyfile(first / "best.ckpt", ensemble / "member_1.ckpt")  # member 0 twice
    with pytest.raises(PanelError, match=r"member_1\.ckpt is not the file it was built on"):
        AdmetPanel.load(ensemble)
    (ensemble / "member_1.ckpt").unlink()  # the last member gone: no gap, one network short
    with pytest.raises(PanelError, match=r"built on 2 networks; member_1\.ckpt missing"):
        AdmetPanel.load(ensemble)
    shutil.copyfile(kept, ensemble / "member_1.ckpt")
    shutil.copyfile(kept, ensemble / "member_2.ckpt")  # one more than it was built on
    with pytest.raises(PanelError, match=r"built on 2 networks; member_2\.ckpt not among them"):
        AdmetPanel.load(ensemble)
    (ensemble / "member_2.ckpt").unlink()
    from graphnorm.panel.networks import check_built_for
    from graphnorm.panel.record import Panel

    check_built_for(Panel.read(ensemble / "panel.json"), ensemble)  # restored: it matches again
    (ensemble / "member_1.ckpt").rename(ensemble / "member_2.ckpt")  # member 1 lost, 2 left
    with pytest.raises(PanelError, match=r"members \[2\] are not numbered 1 to 1"):
        AdmetPanel.load(ensemble)


def test_a_member_of_another_scale_is_refused_by_name(ensemble):
    from graphnorm.panel import PanelFileError
    from graphnorm.panel.networks import load_networks

    ckpt = torch.load(ensemble / "member_1.ckpt", weights_only=True)
    ckpt["graphnorm"]["target_mean"] = [m + 1.0 for m in ckpt["graphnorm"]["target_mean"]]
    torch.save(ckpt, ensemble / "member_1.ckpt")
    with pytest.raises(PanelFileError, match="member_1.ckpt is not a member .* target scaling"):
        load_networks(ensemble)


def test_only_one_recipes_runs_with_different_seeds_are_assembled(members, tmp_path):
    from graphnorm.panel.networks import assemble

    first, second, _ = members
    with pytest.raises(ValueError, match="a seed twice"):
        assemble(tmp_path / "e", [first, first])
    with pytest.raises(ValueError, match="folder of its own"):
        assemble(first, [first, second])
    with pytest.raises(ValueError, match="two runs or more"):
        assemble(tmp_path / "e", [first])
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "readout.jsonl").write_text("{}\n")  # another ensemble's rows
    with pytest.raises(ValueError, match="is not empty"):
        assemble(tmp_path / "used", [first, second])
    spec = json.loads((second / "pretrain.json").read_text())
    (second / "pretrain.json").write_text(json.dumps({**spec, "hidden": 32, "lr": 1.0}))
    with pytest.raises(ValueError, match=r"not the recipe of .*\(hidden, lr differ\)"):
        assemble(tmp_path / "e", [first, second])
    (second / "best.ckpt").unlink()
    with pytest.raises(FileNotFoundError, match="no best.ckpt"):
        assemble(tmp_path / "e", [first, second])


def test_an_ensembles_atoms_are_the_members_mean_and_it_ships_whole(members, ensemble,
                                                                      tmp_path):
    from graphnorm.cli import main
    from graphnorm.explain.panel_attributions import explain_endpoint
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel import Panel
    from graphnorm.panel.build import build_panel

    first, second, run = members
    build_panel(run, second, tmp_path).write(second)
    task = next(e.task for e in Panel.read(ensemble).endpoints if not e.binary)
    for method in ("occlusion", "ig", "rollout"):
        scores = [explain_endpoint(AdmetPanel.load(f, all_endpoints=True), ["c1ccccc1O"], task,
                                   method, steps=8).scores[0] for f in (ensemble, first, second)]
        assert np.allclose(scores[0], (scores[1] + scores[2]) / 2, atol=1e-5), method
    assert main(["panel", "card", str(ensemble), "--raw-dir", str(tmp_path)]) == 0
    assert "The mean of 2 such networks" in (ensemble / "MODEL_CARD.md").read_text()
    dest = tmp_path / "installed"
    assert main(["panel", "ship", str(ensemble), "--to", str(dest)]) == 0
    assert {"best.ckpt", "member_1.ckpt"} <= {p.name for p in dest.iterdir()}
    assert json.loads((dest / "source.json").read_text())["member_sha256"] == Panel.read(
        ensemble).member_sha256
    shipped = AdmetPanel.load(dest, all_endpoints=True).predict(["CCO"])
    assert np.allclose(shipped[task], AdmetPanel.load(ensemble, all_endpoints=True).predict(
        ["CCO"])[task])


def test_a_refit_refuses_an_ensemble(members, ensemble, tmp_path, capsys):
    from graphnorm.cli import main

    first, _, _ = members
    assert main(["panel", "refit", str(ensemble), str(first), "--raw-dir", str(tmp_path),
                 "--quiet"]) != 0
    assert "is an ensemble of 2 networks" in capsys.readouterr().err


def test_members_stored_in_half_precision_load_and_predict_alike(members, ensemble, tmp_path):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel.networks import member_files

    first, second, _ = members
    half = tmp_path / "half"
    assert main(["panel", "ensemble", str(half), str(first), str(second), "--half"]) == 0
    assert main(["panel", "build", str(half), "--raw-dir", str(tmp_path), "--quiet"]) == 0
    state = torch.load(half / "member_1.ckpt", weights_only=True)["state_dict"]
    floats = [v for v in state.values() if v.is_floating_point()]
    assert floats and all(v.dtype == torch.float16 for v in floats)
    assert json.loads((half / "members.json").read_text())["float16"] is True
    for full, small in zip(member_files(ensemble), member_files(half)):
        assert small.stat().st_size < 0.75 * full.stat().st_size
    a = AdmetPanel.load(ensemble, all_endpoints=True).predict(SMILES)
    b = AdmetPanel.load(half, all_endpoints=True).predict(SMILES)
    task = a.columns[1]
    assert np.allclose(a[task], b[task], rtol=1e-2, atol=1e-2, equal_nan=True)


def test_one_network_loads_as_itself(members):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.panel.networks import NetworkMean, load_networks

    first, _, _ = members
    loaded = load_networks(first)
    assert not isinstance(loaded.model, NetworkMean)
    assert loaded.path == load_checkpoint(first / "best.ckpt").path


def test_an_ensembles_card_rebuilds_each_member_then_assembles_them(members, ensemble):
    from graphnorm.panel.card import model_card

    first, second, _ = members
    recorded = json.loads((ensemble / "members.json").read_text())["members"]
    card = model_card(ensemble)
    rebuild = card[card.index("## Rebuild"):].splitlines()
    builds = [line for line in rebuild if line.startswith("graphnorm pretrain")]
    assert builds[0].startswith("graphnorm pretrain --out RUN_0 ") and "--seed" not in builds[0]
    assert builds[1].startswith("graphnorm pretrain --out RUN_1 ") and " --seed 1 " in builds[1]
    assert [b.split("--max-steps ")[1] for b in builds] == [str(m["step"]) for m in recorded]
    steps = [line.split()[2] for line in rebuild if line.startswith("graphnorm panel")]
    assert steps == ["ensemble", "build", "card"]  # no readouts, related or blend were run
    assert "graphnorm panel ensemble RUN RUN_0 RUN_1" in rebuild
