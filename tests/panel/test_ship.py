"""Installing a run as the shipped ADMET panel (graphnorm/panel/ship.py)."""
import json

import pytest

from tiny_panel import make_tiny_panel


@pytest.fixture
def carded(tmp_path):
    from graphnorm.cli import main

    out, _, _ = make_tiny_panel(tmp_path)
    assert main(["panel", "card", str(out), "--raw-dir", str(out.parent)]) == 0
    return out


def test_a_run_ships_whole_and_the_panel_reads_it(carded, tmp_path):
    from graphnorm.cli import main
    from graphnorm.inference.admet_panel import AdmetPanel

    dest = tmp_path / "installed" / "admet"
    dest.mkdir(parents=True)
    (dest / "stale.txt").write_text("from an earlier ship")
    assert main(["panel", "ship", str(carded), "--to", str(dest)]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["MODEL_CARD.md", "best.ckpt", "panel.json",
                                                     "source.json"]
    source = json.loads((dest / "source.json").read_text())
    assert source["run"] == carded.name and source["steps_trained"] == 4
    assert source["checkpoint_sha256"] == json.loads((dest / "panel.json").read_text())[
        "checkpoint_sha256"]
    assert len(AdmetPanel.load(dest, all_endpoints=True).entries) == 4
    assert not (dest.parent / "admet.new").exists() and not (dest.parent / "admet.old").exists()


def test_files_that_do_not_belong_together_are_refused_and_nothing_is_replaced(carded, tmp_path):
    from graphnorm.panel.ship import ShipError, ship

    dest = tmp_path / "admet"
    dest.mkdir()
    (dest / "keep.txt").write_text("the previous panel")
    panel = json.loads((carded / "panel.json").read_text())
    card = (carded / "MODEL_CARD.md").read_text()
    (carded / "MODEL_CARD.md").write_text(card.replace(panel["checkpoint_sha256"][:16], "0" * 16))
    with pytest.raises(ShipError, match="describes another checkpoint"):
        ship(carded, dest)
    (carded / "MODEL_CARD.md").write_text(card)
    (carded / "panel.json").write_text(json.dumps({**panel, "checkpoint_sha256": "f" * 64}))
    with pytest.raises(ShipError, match="best.ckpt is not the file it was built on"):
        ship(carded, dest)
    (carded / "panel.json").unlink()
    with pytest.raises(ShipError, match="no panel.json"):
        ship(carded, dest)
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


def test_a_checkpoint_that_does_not_load_is_not_shipped(carded, tmp_path):
    import hashlib

    from graphnorm.panel.ship import ShipError, check_shippable

    (carded / "best.ckpt").write_bytes(b"not a checkpoint")
    sha = hashlib.sha256(b"not a checkpoint").hexdigest()
    panel = json.loads((carded / "panel.json").read_text())
    (carded / "panel.json").write_text(json.dumps({**panel, "checkpoint_sha256": sha}))
    (carded / "MODEL_CARD.md").write_text(f"card of `{sha[:16]}…`")
    with pytest.raises(ShipError, match="does not load"):
        check_shippable(carded)


def test_a_folder_it_may_not_write_is_named(carded, tmp_path, monkeypatch):
    from pathlib import Path

    from graphnorm.panel.ship import ShipError, ship

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(ShipError, match="panel ship RUN --to FOLDER"):
        ship(carded, tmp_path / "site-packages" / "admet")


def test_shipping_into_the_package_counts_all_its_data(carded, tmp_path, monkeypatch):
    from graphnorm.panel import ship as S

    package = tmp_path / "pretrained"
    dest = package / "admet"
    dest.mkdir(parents=True)
    (dest / "best.ckpt").write_bytes(b"the old panel: replaced, so not counted" * 1000)
    (package / "backbone.ckpt").write_bytes(b"x" * 60_000)
    monkeypatch.setattr(S, "shipped_folder", lambda: dest)
    panel_bytes = sum(p.stat().st_size for p in carded.iterdir()
                      if p.name in ("best.ckpt", "panel.json", "MODEL_CARD.md"))
    monkeypatch.setattr(S, "MAX_SHIPPED_BYTES", panel_bytes + 59_000)
    with pytest.raises(S.ShipError, match="of other package data"):
        S.ship(carded)
    assert (dest / "best.ckpt").read_bytes().startswith(b"the old panel")
    monkeypatch.setattr(S, "MAX_SHIPPED_BYTES", panel_bytes + 61_000)
    assert S.ship(carded) == dest and (dest / "panel.json").is_file()
