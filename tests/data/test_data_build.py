"""Dataset building output (graphnorm/data/build.py): a bar on a terminal, a few plain lines
in a log file, nothing with progress=False; benchmark molecules the featurizer rejects stop
the build with their messages (from the one featurization, not a second one)."""
import sys

from graphnorm.chem import FeaturizerConfig
from graphnorm.data.build import featurize_with_progress

ZINC = FeaturizerConfig(vocab="zinc")

SMILES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN"] * 200  # 800 molecules: 4 chunks of <= 256


def test_log_file_gets_a_few_lines_not_a_redraw_per_chunk(capsys):
    result = featurize_with_progress(SMILES, ZINC, "benchmark", workers=1, progress=True,
                                     desc="mols")
    err = capsys.readouterr().err  # captured: not a terminal
    assert len(result.graphs) == 800 and not result.failures()
    assert "\r" not in err
    lines = err.splitlines()
    assert 1 <= len(lines) <= 4 and lines[-1].endswith("featurized 800/800 molecules")


def test_terminal_gets_the_bar_and_no_extra_lines(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    featurize_with_progress(SMILES, ZINC, "benchmark", workers=1, progress=True, desc="mols")
    err = capsys.readouterr().err
    assert "800/800" in err and "[graphnorm]" not in err  # tqdm's bar


def test_no_progress_is_silent(capsys):
    featurize_with_progress(SMILES[:10], ZINC, "benchmark", workers=1, progress=False)
    assert capsys.readouterr().err == ""


def test_rejected_benchmark_molecules_name_row_and_reason():
    import pytest

    from graphnorm.data.build import FeaturizeFailed, build_molhiv

    smiles = ["CCO", "C1CC", "c1ccccc1"]
    with pytest.raises(FeaturizeFailed) as err:
        build_molhiv(smiles, [0, 1, 0], FeaturizerConfig(), workers=1, progress=False)
    assert "rejected 1 molecule(s)" in str(err.value)
    assert "row 1 'C1CC': RDKit cannot parse SMILES 'C1CC'" in str(err.value)
