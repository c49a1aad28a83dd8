"""A panel against a peer on measured molecules (graphnorm/panel/versus.py, ``graphnorm panel
versus``)."""
import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from graphnorm.panel.versus import ASAP_ADMET_AI, Match, markdown, parse_matches, versus


def _frames(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 1, n)
    measured = pd.DataFrame({"Q": y, "R": rng.normal(0, 1, n)})
    ours = pd.DataFrame({"q": y + rng.normal(0, 0.3, n), "r": rng.normal(0, 1, n)})
    theirs = pd.DataFrame({"q": rng.normal(0, 1, n), "r": rng.normal(0, 1, n)})
    return measured, ours, theirs


def test_better_worse_and_tied_per_quantity():
    measured, ours, theirs = _frames()
    rows = versus(measured, ours, theirs, [Match("Q", "q", "q"), Match("R", "r", "r")])
    assert [r["verdict"] for r in rows] == ["better", "tied"]
    assert rows[0]["ours"] > 0.9 and rows[0]["d_low"] > 0
    flipped = versus(measured, theirs, ours, [Match("Q", "q", "q")])
    assert flipped[0]["verdict"] == "worse"
    assert "better on 1, tied on 1, worse on 0 of 2" in markdown(rows)


def test_missing_values_drop_the_molecule_and_bad_input_is_named():
    measured, ours, theirs = _frames()
    measured.loc[:9, "Q"] = np.nan
    assert versus(measured, ours, theirs, [Match("Q", "q", "q")])[0]["molecules"] == 110
    with pytest.raises(ValueError, match="the peer's predictions has no column 'x'"):
        versus(measured, ours, theirs, [Match("Q", "q", "x")])
    with pytest.raises(ValueError, match="one row per molecule"):
        versus(measured, ours.iloc[:5], theirs, [Match("Q", "q", "q")])
    assert parse_matches("asap-admet-ai") == ASAP_ADMET_AI
    assert parse_matches("LogD=a/b:C") == (Match("LogD", "a/b", "C"),)
    with pytest.raises(ValueError, match="QUANTITY=OURS:THEIRS"):
        parse_matches("LogD=a/b")


def test_the_cli_scores_a_panel_against_given_peer_predictions(tmp_path, capsys):
    from graphnorm.cli import main
    from tiny_panel import make_tiny_panel

    out, _, _ = make_tiny_panel(tmp_path)
    smiles = ["CCO", "CCN", "CCCl", "c1ccccc1O", "CC(=O)O", "CCCC", "CCO"]  # CCO twice
    pd.DataFrame({"smiles": smiles, "Q": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0]}).to_csv(
        tmp_path / "m.csv", index=False)
    pd.DataFrame({"col": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}).to_csv(tmp_path / "peer.csv",
                                                                index=False)
    args = ["panel", "versus", str(tmp_path / "m.csv"), "--match", "Q=alpha/logS:col",
            "--peer-predictions", str(tmp_path / "peer.csv"), "--model", str(out), "--all",
            "--out", str(tmp_path / "v"), "--ledger", str(tmp_path / "ledger.csv")]
    assert main(args) == 0
    record = json.loads((tmp_path / "v" / "versus.json").read_text())
    row = record["rows"][0]
    assert row["molecules"] == 6 and row["theirs"] == pytest.approx(-1.0)  # repeats averaged
    assert len(pd.read_csv(tmp_path / "ledger.csv")) == 1
    assert (tmp_path / "v" / "versus.png").read_bytes()[:4] == b"\x89PNG"  # the table's picture
    # the scoring names what it scored: the panel file, the peer
    assert record["panel_sha256"] == hashlib.sha256((out / "panel.json").read_bytes()).hexdigest()
    assert record["peer"] == str(tmp_path / "peer.csv")
    assert main(args[:2] + [str(tmp_path / "nothing.csv")] + args[3:]) == 2
    assert "no such measured table" in capsys.readouterr().err


def test_a_card_shows_its_own_panels_zero_shot_scoring_and_refuses_anothers(tmp_path):
    from graphnorm.cli import main
    from graphnorm.panel.card import model_card
    from tiny_panel import make_tiny_panel

    out, _, _ = make_tiny_panel(tmp_path)
    smiles = ["CCO", "CCN", "CCCl", "c1ccccc1O", "CC(=O)O", "CCCC"]
    pd.DataFrame({"smiles": smiles, "Q": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}).to_csv(
        tmp_path / "m.csv", index=False)
    pd.DataFrame({"col": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}).to_csv(tmp_path / "peer.csv",
                                                                index=False)
    assert main(["panel", "versus", str(tmp_path / "m.csv"), "--match", "Q=alpha/logS:col",
                 "--peer-predictions", str(tmp_path / "peer.csv"), "--peer-name",
                 "ADMET-AI 2.0.1", "--model", str(out), "--all", "--out",
                 str(tmp_path / "v")]) == 0
    scoring = tmp_path / "v" / "versus.json"
    row = json.loads(scoring.read_text())["rows"][0]
    assert "## Ranking a new program's molecules" not in model_card(out)
    assert main(["panel", "card", str(out), "--zero-shot", str(scoring)]) == 0
    card = (out / "MODEL_CARD.md").read_text()
    section = card[card.index("## Ranking a new program's molecules"):
                   card.index("## Data")]
    assert "`" + tmp_path.name + "/m.csv` against ADMET-AI 2.0.1" in section
    assert (f"| Q (6) | alpha/logS | {row['ours']:.3f} | col | {row['theirs']:.3f} | "
            f"[{row['d_low']:+.3f}, {row['d_high']:+.3f}] | {row['verdict']} |") in section
    for bad in ("{not json", '{"rows": [{"quantity": "Q"}]}'):  # damaged: named, not a KeyError
        (tmp_path / "bad.json").write_text(bad)
        with pytest.raises(ValueError, match="bad.json: not a versus.json of `graphnorm panel"):
            model_card(out, zero_shot=[tmp_path / "bad.json"])
    (out / "panel.json").write_text((out / "panel.json").read_text() + "\n")  # another panel
    with pytest.raises(ValueError, match="scored another panel than .*panel.json"):
        model_card(out, zero_shot=[scoring])
