"""Molecule drawings with per-atom scores (RDKit ``rdMolDraw2D``): red = the atom raises the
prediction, blue = it lowers it, colour strength = |score| / max |score| of the molecule (so
colours compare atoms within one molecule, not across molecules); each atom's note is its
score. Highlight discs keep an SVG at a few kB (a ``SimilarityMaps`` contour SVG is ~1 MB).
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np

MAX_INTENSITY = 0.85  # the strongest atom's colour: light enough to read its label


def atom_color(score: float, scale: float) -> tuple[float, float, float]:
    """Diverging RGB in [0, 1]: white at 0, red for positive, blue for negative."""
    a = MAX_INTENSITY * min(1.0, abs(score) / scale) if scale > 0 else 0.0
    return (1.0, 1.0 - a, 1.0 - a) if score >= 0 else (1.0 - a, 1.0 - a, 1.0)


def note(score: float) -> str:
    """A short label: ``0.53``, ``-12.4``, ``310``."""
    return f"{score:.2f}" if abs(score) < 10 else f"{score:.3g}" if abs(score) < 1000 else f"{score:.0f}"


def _prepared(smiles: str, scores: np.ndarray, notes: bool):
    from rdkit import Chem, rdBase
    from rdkit.Chem.Draw import rdMolDraw2D

    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise ValueError(f"cannot draw SMILES {smiles!r}: RDKit cannot parse it")
    scores = np.asarray(scores, dtype=float).reshape(-1)
    if len(scores) != mol.GetNumAtoms():
        raise ValueError(f"{len(scores)} scores for {mol.GetNumAtoms()} atoms of {smiles!r}")
    if notes:
        for atom, s in zip(mol.GetAtoms(), scores):
            atom.SetProp("atomNote", note(float(s)))
    finite = np.abs(scores[np.isfinite(scores)])
    scale = float(finite.max()) if finite.size else 0.0
    colors = {i: atom_color(float(s), scale) for i, s in enumerate(scores) if np.isfinite(s)}
    radii = {i: 0.3 + 0.25 * (abs(float(s)) / scale if scale > 0 else 0.0)
             for i, s in enumerate(scores) if np.isfinite(s)}
    return rdMolDraw2D.PrepareMolForDrawing(mol), colors, radii


def draw_attributions(smiles: str, scores: Sequence[float], fmt: str = "svg",
                      size: tuple[int, int] = (360, 300), legend: str = "",
                      notes: bool = True) -> str | bytes:
    """One molecule with its atom scores: SVG text (``fmt="svg"``) or PNG bytes (``"png"``)."""
    from rdkit.Chem.Draw import rdMolDraw2D

    if fmt not in ("svg", "png"):
        raise ValueError(f"drawing format must be svg or png, got {fmt!r}")
    mol, colors, radii = _prepared(smiles, np.asarray(scores), notes)
    d = rdMolDraw2D.MolDraw2DSVG(*size) if fmt == "svg" else rdMolDraw2D.MolDraw2DCairo(*size)
    d.drawOptions().annotationFontScale = 0.6
    d.DrawMolecule(mol, highlightAtoms=list(colors), highlightAtomColors=colors,
                   highlightAtomRadii=radii, highlightBonds=[], legend=legend)
    d.FinishDrawing()
    return d.GetDrawingText()


def grid_png(items: Sequence[tuple[str, Sequence[float], str]], per_row: int = 6,
             cell: tuple[int, int] = (260, 220)) -> Optional[bytes]:
    """PNG of up to len(items) molecules ``(smiles, scores, legend)`` in a grid (None if none)."""
    from rdkit.Chem.Draw import rdMolDraw2D

    if not items:
        return None
    prepared = [_prepared(s, np.asarray(sc), notes=False) for s, sc, _ in items]
    cols = min(per_row, len(items))
    rows = -(-len(items) // cols)
    d = rdMolDraw2D.MolDraw2DCairo(cols * cell[0], rows * cell[1], cell[0], cell[1])
    d.DrawMolecules([m for m, _, _ in prepared],
                    highlightAtoms=[list(c) for _, c, _ in prepared],
                    highlightAtomColors=[c for _, c, _ in prepared],
                    highlightAtomRadii=[r for _, _, r in prepared],
                    highlightBonds=[[] for _ in prepared],
                    legends=[legend for _, _, legend in items])
    d.FinishDrawing()
    return d.GetDrawingText()


def safe_name(text: str) -> str:
    """``text`` usable in a file name: runs of other characters become ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def file_stem(position: int, target: str, several_targets: bool) -> str:
    """``mol_0007`` (input position 6) or ``mol_0007_<target>`` for several targets."""
    return f"mol_{position + 1:04d}" + (f"_{safe_name(target)}" if several_targets else "")
