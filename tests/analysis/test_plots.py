"""graphnorm.analysis.plots writes real PNG files and compares several runs per figure."""
import struct

import numpy as np
import pytest
import torch

from graphnorm.analysis import (
    plot_dimension_distributions,
    plot_explained_variance,
    plot_spectra,
    singular_values,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    """(width, height) from the IHDR chunk; fails if the file is not a PNG."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(0)
    collapsed = rng.normal(size=(400, 3)) @ rng.normal(size=(3, 32))  # rank 3
    return {"ShareNorm": collapsed, "SepNorm": torch.randn(400, 32, generator=torch.Generator().manual_seed(0))}


def test_plot_spectra_compares_runs(tmp_path, runs):
    spectra = {k: singular_values(v) for k, v in runs.items()}  # contains ~0 values: masked on log axis
    out = plot_spectra(spectra, tmp_path / "nested" / "spectra.png")
    assert out.exists() and out.stat().st_size > 1000
    w, h = _png_size(out)
    assert w > 100 and h > 100
    # raw (un-normalized) lists work too
    assert plot_spectra({"a": [3.0, 2.0, 1.0]}, tmp_path / "raw.png", normalize=False, log=False).exists()


def test_plot_dimension_distributions_panel_per_run(tmp_path, runs):
    one = plot_dimension_distributions({"ShareNorm": runs["ShareNorm"]}, tmp_path / "one.png", dims=8,
                                       max_points=100)
    two = plot_dimension_distributions(runs, tmp_path / "two.png", dims=8, max_points=100)
    assert _png_size(two)[1] > 1.5 * _png_size(one)[1]  # second panel stacked below


def test_plot_dimension_distributions_groups_and_explicit_dims(tmp_path, runs):
    # Fig. 2 layout: [VNode] vs token features overlaid in each run's panel
    grouped = {
        name: {"[VNode]": z[:100], "tokens": np.asarray(z)[100:] * 0.5}
        for name, z in runs.items()
    }
    out = plot_dimension_distributions(grouped, tmp_path / "groups.png", dims=[0, 5, 31], max_points=50)
    assert out.stat().st_size > 1000
    # default dims=50 is clamped to D
    small = {"a": np.random.default_rng(1).normal(size=(60, 6))}
    assert plot_dimension_distributions(small, tmp_path / "all.png").exists()
    with pytest.raises(ValueError):
        plot_dimension_distributions(runs, tmp_path / "bad.png", dims=[40])


def test_plot_explained_variance(tmp_path, runs):
    out = plot_explained_variance(runs, tmp_path / "ev.png", max_k=20)
    assert out.stat().st_size > 1000 and _png_size(out)[0] > 100


def test_empty_mapping_is_rejected(tmp_path):
    for fn in (plot_spectra, plot_dimension_distributions, plot_explained_variance):
        with pytest.raises(ValueError):
            fn({}, tmp_path / "x.png")
