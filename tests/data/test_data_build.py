"""Dataset building output (graphnorm/data/build.py): a bar on a terminal, a few plain lines
in a log file, nothing with progress=False."""
import sys

from graphnorm.data.build import featurize_all

SMILES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN"] * 200  # 800 molecules: 4 chunks of <= 256


def test_log_file_gets_a_few_lines_not_a_redraw_per_chunk(capsys):
    arrays, _, errors = featurize_all(SMILES, "zinc", 5, 20, workers=1, progress=True,
                                      desc="mols")
    err = capsys.readouterr().err  # captured: not a terminal
    assert len(arrays) == 800 and not errors
    assert "\r" not in err
    lines = err.splitlines()
    assert 1 <= len(lines) <= 4 and lines[-1].endswith("featurized 800/800 molecules")


def test_terminal_gets_the_bar_and_no_extra_lines(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    featurize_all(SMILES, "zinc", 5, 20, workers=1, progress=True, desc="mols")
    err = capsys.readouterr().err
    assert "800/800" in err and "[graphnorm]" not in err  # tqdm's bar


def test_no_progress_is_silent(capsys):
    featurize_all(SMILES[:10], "zinc", 5, 20, workers=1, progress=False)
    assert capsys.readouterr().err == ""
