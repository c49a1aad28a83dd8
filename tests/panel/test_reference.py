"""Percentiles among a reference set of molecules (graphnorm/panel/reference.py, ``graphnorm
panel reference``, ``graphnorm admet``'s ``<endpoint>_percentile``)."""
import gzip
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from graphnorm.panel import PanelFileError
from graphnorm.panel.reference import GRID, MIN_MOLECULES, Reference, quantiles_of, read_reference

from tiny_panel import make_tiny_panel

MOLECULES = ["CCO", "CCN", "CCCl", "c1ccccc1O", "CC(=O)O", "CCCC", "CCCCO", "OCCO", "CC(C)O",
             "CCOC", "c1ccncc1", "CC(=O)N", "CCS", "CCCN", "OC(=O)CC", "c1ccccc1", "CCBr",
             "CNC", "CC#N", "C1CCCCC1", "CCC(=O)O", "COC(=O)C"]


def _reference(q):
    return Reference("r", "s", 100, "0" * 64, {"t": list(q)})


def test_a_value_takes_its_place_among_the_quantiles():
    ref = _reference(np.linspace(0.0, 1.0, 101))
    assert ref.percentile("t", [0.25, 0.5, -3.0, 7.0, np.nan]).tolist()[:4] == \
        pytest.approx([25.0, 50.0, 0.0, 100.0])
    assert np.isnan(ref.percentile("t", [np.nan])[0])
    # a run of equal quantiles (half the drugs predicted 0): a value there takes its middle
    tied = _reference(np.r_[np.zeros(51), np.linspace(0.02, 1.0, 50)])
    assert tied.percentile("t", [0.0])[0] == pytest.approx(25.0)
    assert tied.percentile("t", [1.0])[0] == pytest.approx(100.0)


def test_quantiles_leave_out_endpoints_with_too_few_predictions():
    frame = pd.DataFrame({"a": np.arange(MIN_MOLECULES, dtype=float),
                          "b": [np.nan] + [1.0] * (MIN_MOLECULES - 1)})
    q = quantiles_of(frame, ["a", "b"])
    assert list(q) == ["a"] and len(q["a"]) == len(GRID)
    assert q["a"][0] == 0.0 and q["a"][-1] == MIN_MOLECULES - 1 and q["a"][50] == 9.5


@pytest.fixture
def shown_panel(tmp_path):
    """The tiny panel with every endpoint shown (a 4-step model shows none on its own)."""
    folder, _, panel = make_tiny_panel(tmp_path)
    for e in panel["endpoints"]:
        e["shown"] = True
    (folder / "panel.json").write_text(json.dumps(panel))
    return folder


def test_the_command_writes_percentiles_that_admet_reads_and_a_rebuilt_panel_refuses(
        shown_panel, tmp_path, capsys):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel, PanelError

    # the default reference: the corpus's ClinTox rows with FDA_APPROVED = 1
    clintox = tmp_path / "admet_corpus" / "molnet_clintox"
    clintox.mkdir(parents=True)
    flags = [1] * 21 + [0]  # the last is not approved: left out
    with gzip.open(clintox / "data.csv.gz", "wt") as f:
        pd.DataFrame({"smiles": MOLECULES, "FDA_APPROVED": flags}).to_csv(f, index=False)
    assert main(["panel", "reference", str(shown_panel), "--raw-dir", str(tmp_path),
                 "--quiet"]) == 0
    assert "among 21 of 21 molecules (FDA-approved drugs" in capsys.readouterr().out
    reference = read_reference(shown_panel)
    panel = AdmetPanel.load(shown_panel)
    assert panel.reference == reference and set(reference.quantiles) == {e.task for e in
                                                                        panel.entries}
    frame = panel.predict(MOLECULES[:21] + ["not a smiles"])
    task = panel.entries[0].task
    pct = frame[f"{task}_percentile"].to_numpy()
    # the reference's own molecules spread over 0-100 in the order of their values
    order = np.argsort(frame[task].to_numpy()[:21], kind="stable")
    assert np.all(np.diff(pct[:21][order]) >= 0) and pct[:21].min() <= 5 and pct[:21].max() >= 95
    assert np.isnan(pct[21])  # a molecule that failed has none
    # a panel rebuilt since (here: one endpoint hidden) makes the reference stale: refused
    record = json.loads((shown_panel / "panel.json").read_text())
    record["endpoints"][0]["shown"] = False
    (shown_panel / "panel.json").write_text(json.dumps(record))
    with pytest.raises(PanelError, match="reference.json was computed with another panel.json"):
        AdmetPanel.load(shown_panel)
    assert AdmetPanel.load(shown_panel, reference=False).reference is None


def test_a_reference_of_ones_own_molecules_ships_with_the_panel_and_bad_files_are_named(
        shown_panel, tmp_path):
    from graphnorm.cli import main
    from graphnorm.panel.card import write_model_card
    from graphnorm.panel.ship import ShipError, ship

    pd.DataFrame({"smiles": MOLECULES}).to_csv(tmp_path / "library.csv", index=False)
    assert main(["panel", "reference", str(shown_panel), "--molecules",
                 str(tmp_path / "library.csv"), "--name", "compounds of my series",
                 "--quiet"]) == 0
    card = write_model_card(shown_panel, tmp_path).read_text()
    assert "predictions for 22 compounds of my series" in card
    assert "graphnorm panel reference RUN   # percentiles among compounds of my series" in card
    dest = ship(shown_panel, tmp_path / "shipped")
    assert read_reference(dest).name == "compounds of my series"
    # too few molecules the panel can read
    pd.DataFrame({"smiles": MOLECULES[:3]}).to_csv(tmp_path / "few.csv", index=False)
    assert main(["panel", "reference", str(shown_panel), "--molecules",
                 str(tmp_path / "few.csv"), "--quiet"]) == 2
    # a damaged file: named, and no ship
    (shown_panel / "reference.json").write_text('{"format": 1, "name": "x"}')
    with pytest.raises(PanelFileError, match="reference.json: not a reference of percentiles"):
        read_reference(shown_panel)
    with pytest.raises(ShipError, match="not a reference of percentiles"):
        ship(shown_panel, tmp_path / "shipped2")
    shutil.rmtree(tmp_path / "shipped")
