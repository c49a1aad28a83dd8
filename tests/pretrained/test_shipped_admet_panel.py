"""The ADMET panel graphnorm ships (graphnorm/pretrained/admet/, `graphnorm panel ship`):
installed whole, read by `graphnorm admet` without --model, and fine-tuned by name."""
import json

import numpy as np
import torch

from graphnorm.pretrained import admet_panel_folder, pretrained_path
from graphnorm.explain.panel_attributions import explain_endpoint, score_scale


def test_the_shipped_files_belong_together():
    from graphnorm.panel.ship import check_shippable

    folder = admet_panel_folder()
    source = json.loads((folder / "source.json").read_text())
    assert check_shippable(folder)["checkpoint_sha256"] == source["checkpoint_sha256"]
    assert pretrained_path("admet-panel") == folder / "best.ckpt"
    assert source["spec"]["held_out_tasks"] is False  # every endpoint has a trained head


def test_no_shipped_file_is_left_out_of_git():
    """A clean clone (CI, a user's install from source) must hold every file the panel reads:
    an ensemble's member_<k>.ckpt once fell under the repository's *.ckpt ignore rule."""
    import shutil
    import subprocess

    import pytest

    folder = admet_panel_folder()
    git = shutil.which("git")
    top = subprocess.run([git, "-C", str(folder), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True) if git else None
    if top is None or top.returncode != 0:
        pytest.skip("not a git checkout")
    files = sorted(str(p) for p in folder.iterdir() if p.is_file())
    ignored = subprocess.run([git, "-C", str(folder), "check-ignore", *files],
                             capture_output=True, text=True).stdout.split()
    assert ignored == [], f"shipped files git would leave out: {ignored}"


def test_admet_without_a_model_predicts_the_shipped_endpoints(tmp_path):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel

    panel = AdmetPanel.load()
    frame = panel.predict(["CC(=O)Oc1ccccc1C(=O)O", "not a smiles"])
    shown = [e.task for e in panel.entries]
    assert shown and all(e.shown for e in panel.entries)
    assert np.isfinite(frame.loc[0, shown].astype(float)).all()
    assert frame["error"][1] and np.isnan(frame.loc[1, shown[0]])
    out = tmp_path / "panel.csv"
    assert main(["admet", "--smiles", "CCO", "--output", str(out)]) == 0
    assert out.read_text().startswith("smiles,")


def test_init_from_admet_fits_the_admet_recipe(tmp_path):
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.models import build_model
    from graphnorm.train.init_from import init_from_checkpoint
    from graphnorm.train.model_config import model_config_for
    from resolved import resolved

    loaded = load_checkpoint(pretrained_path("admet"))
    table = tmp_path / "t.csv"
    table.write_text("smiles,y\nCCO,1.0\nCCN,2.0\n")
    cfg = resolved(["train", "--data", str(table), "--target-columns", "y", "--recipe", "admet",
                    "--init-from", "admet"])
    featurizer = cfg.featurizer_config(loaded.featurizer.vocab)
    config = model_config_for(cfg, {"num_tasks": 1}, featurizer)
    model = build_model(config)
    info = init_from_checkpoint(model, config, featurizer, "admet")
    # a pre-training checkpoint counts steps, its warm starts' too (X: 16,988 + 5,000)
    assert info["shipped"] == "admet" and info["pretrain_steps"] == 21_988
    from graphnorm.train.init_from import ADDABLE_AT_HEAD

    # every tensor but the head's, and the head-side encoders the recipe starts afresh (the
    # shipped backbone read RDKit's fast descriptor set, the recipe reads the full one)
    fresh = ("head.",) + tuple(ADDABLE_AT_HEAD[k] for k in info.get("added_at_head", []))
    body = {k: v for k, v in loaded.model.state_dict().items() if not k.startswith(fresh)}
    assert info["tensors"] == len(body) > 50
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in body.items())


def test_a_shipped_booster_endpoint_has_atom_attributions_that_add_up():
    """Every shown endpoint keeps atom attributions: a booster's by TreeSHAP, whose atom
    scores add up to what the molecule's Morgan substructures contribute."""
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.panel.boosters import MORGAN_BITS, morgan_counts

    panel = AdmetPanel.load()
    boosted = [e.task for e in panel.entries if e.by_booster]
    assert boosted, "the shipped panel predicts no endpoint with a booster"
    smiles = "CC(=O)Oc1ccccc1C(=O)O"
    view = panel.view(panel.predictor.featurize([smiles])[0], [smiles])
    for task in boosted[:5]:
        got = explain_endpoint(panel, [smiles], task)
        j = panel.endpoint_position(task)
        scale = score_scale(panel, task, "occlusion")[1]
        phi = panel.boosters.contributions(task, view)[0]
        present = morgan_counts([smiles])[0] > 0
        assert got.method == "treeshap" and np.isfinite(got.scores[0]).all()
        assert abs(got.scores[0].sum() - phi[:MORGAN_BITS][present].sum() * scale) < 1e-9
        assert j in panel.by_booster
    assert any(np.abs(explain_endpoint(panel, [smiles], t).scores[0]).max() > 0 for t in boosted[:5])


def test_one_molecule_admet_call_does_not_import_pyg():
    # PyG's import (~3 s, torch._dynamo with it) was a third of a one-molecule call: the
    # shipped panel's path (featurize, collate, Graphormer with its GINE branch, boosters)
    # must not bring it back
    import subprocess
    import sys

    code = ("import sys, io, contextlib; from graphnorm.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['admet', '--smiles', 'CCO']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch_geometric'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
