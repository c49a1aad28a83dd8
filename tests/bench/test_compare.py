"""`graphnorm compare`: two variant folders paired by seed (metrics.json written by hand here,
so the expected differences are known exactly)."""
import json

import numpy as np
import pytest
from scipy import stats

from graphnorm.cli import main
from graphnorm.bench.compare import compare, format_comparison


def _runs(folder, values, dataset="ogbg-molhiv", metric="rocauc"):
    for seed, v in values.items():
        d = folder / f"seed{seed}"
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps(
            {"dataset": dataset, "metric": metric, "seed": seed, f"test_{metric}": v,
             f"val_{metric}": v + 0.1}))
    return folder


def test_pairs_by_seed_and_leaves_out_unpaired(tmp_path):
    a = _runs(tmp_path / "a", {0: 0.80, 1: 0.70, 2: 0.75, 7: 0.99})
    b = _runs(tmp_path / "b", {0: 0.78, 1: 0.71, 2: 0.70, 3: 0.10})
    r = compare(a, b)
    d = np.array([0.02, -0.01, 0.05])
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / np.sqrt(3)
    assert r["seeds"] == [0, 1, 2] and r["unpaired_seeds"] == [3, 7]
    assert r["paired_diff_mean"] == pytest.approx(d.mean())
    assert r["paired_ci95_low"] == pytest.approx(d.mean() - half)
    assert r["paired_wins"] == 2 and r["higher_is_better"]
    assert r["a_mean"] == pytest.approx(0.75) and r["b_mean"] == pytest.approx(0.73)
    text = format_comparison(r)
    assert "better on 2/3" in text and "seeds [3, 7]" in text and "+0.0500" in text


def test_lower_is_better_for_mae_and_val_split(tmp_path):
    a = _runs(tmp_path / "a", {0: 0.10, 1: 0.12}, dataset="zinc", metric="mae")
    b = _runs(tmp_path / "b", {0: 0.11, 1: 0.11}, dataset="zinc", metric="mae")
    r = compare(a, b, split="val")
    assert not r["higher_is_better"] and r["paired_wins"] == 1
    assert r["a_values"] == pytest.approx([0.20, 0.22])  # val = test + 0.1 above


@pytest.mark.parametrize("other", [{"dataset": "zinc"}, {"metric": "mae"}])
def test_refuses_different_dataset_or_metric(tmp_path, other):
    a = _runs(tmp_path / "a", {0: 0.8})
    b = _runs(tmp_path / "b", {0: 0.8}, **other)
    with pytest.raises(ValueError, match="not measured on the same thing"):
        compare(a, b)


def test_bad_folders_name_the_input(tmp_path):
    a = _runs(tmp_path / "a", {0: 0.8})
    with pytest.raises(FileNotFoundError, match="no such folder"):
        compare(a, tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no finished runs"):
        compare(a, tmp_path)  # the benchmark folder itself, not runs/<variant>
    bad = tmp_path / "bad" / "seed0"
    bad.mkdir(parents=True)
    (bad / "metrics.json").write_text("{truncated")
    with pytest.raises(ValueError, match=r"bad/seed0/metrics.json"):
        compare(a, tmp_path / "bad")
    mixed = _runs(tmp_path / "mixed", {0: 0.8})
    _runs(tmp_path / "mixed", {1: 0.1}, metric="mae")
    with pytest.raises(ValueError, match="differs from the other runs"):
        compare(a, mixed)
    lone = _runs(tmp_path / "lone", {5: 0.8})
    with pytest.raises(ValueError, match="no seed in common"):
        format_comparison(compare(a, lone))


def test_cli_prints_and_writes_json(tmp_path, capsys):
    a = _runs(tmp_path / "a", {0: 0.8, 1: 0.9})
    b = _runs(tmp_path / "b", {0: 0.7, 1: 0.7})
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0
    assert "A - B: +0.1500" in capsys.readouterr().out
    assert json.loads(out.read_text())["paired_diff_mean"] == pytest.approx(0.15)
    one = _runs(tmp_path / "one", {0: 0.5})  # one pair: no interval, null in the JSON
    assert main(["compare", str(one), str(b), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["paired_ci95_low"] is None
    assert main(["compare", str(a), str(tmp_path / "nope")]) == 2
    assert "graphnorm compare: error:" in capsys.readouterr().err
