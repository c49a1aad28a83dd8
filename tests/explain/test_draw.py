"""Molecule drawings with atom scores."""
import pytest

from graphnorm.explain.draw import atom_color, draw_attributions, file_stem, grid_png, note


def test_colors_diverge_from_white():
    assert atom_color(0.0, 1.0) == (1.0, 1.0, 1.0)
    red, blue = atom_color(2.0, 2.0), atom_color(-1.0, 2.0)
    assert red[0] == 1.0 and red[1] < 0.2 and blue[2] == 1.0 and 0.5 < blue[0] < 1.0
    assert atom_color(5.0, 0.0) == (1.0, 1.0, 1.0)  # all scores 0: no colour, no division


def test_svg_png_and_grid():
    svg = draw_attributions("CC(=O)O", [0.5, -1.0, 0.0, 2.0], "svg", legend="x")
    assert "<svg" in svg and len(svg) < 60_000  # labels are drawn as paths
    assert draw_attributions("CC(=O)O", [0.5, -1.0, 0.0, 2.0], "png")[:4] == b"\x89PNG"
    assert grid_png([("CCO", [1, 2, 3], "a"), ("CN", [0, 0], "b")])[:4] == b"\x89PNG"
    assert grid_png([]) is None


def test_bad_drawing_inputs_are_named():
    with pytest.raises(ValueError, match="3 scores for 4 atoms"):
        draw_attributions("CC(=O)O", [1, 2, 3])
    with pytest.raises(ValueError, match="cannot draw SMILES 'xx'"):
        draw_attributions("xx", [1])
    with pytest.raises(ValueError, match="svg or png"):
        draw_attributions("C", [1], "gif")


def test_names():
    assert note(0.531) == "0.53" and note(-12.44) == "-12.4" and note(4321.0) == "4321"
    assert file_stem(6, "log P/x", False) == "mol_0007"
    assert file_stem(6, "log P/x", True) == "mol_0007_log_P_x"
