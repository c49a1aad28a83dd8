"""Every file of graphnorm/pretrained/ (the shipped backbones and ADMET panel) is package data:
a file the globs of pyproject.toml miss is absent from an installed wheel, and the panel then
refuses to load there (a hybrid panel without its boosters' bundle)."""
import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_file_is_in_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["graphnorm.pretrained"]
    folder = ROOT / "graphnorm" / "pretrained"
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    assert "admet/readouts.json.xz" in files or "admet/panel.json" in files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) and f.count("/") == g.count("/")
                                           for g in globs)]
    assert missing == []
