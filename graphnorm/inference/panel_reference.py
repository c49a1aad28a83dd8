"""``graphnorm panel reference RUN``: the panel's predictions for a reference set of molecules,
kept as percentiles beside its panel.json (the format and the arithmetic:
`graphnorm.panel.reference`). By default the FDA-approved drugs of the corpus's ClinTox table;
``--molecules FILE`` takes any (a compound library, a project's series)."""
from __future__ import annotations

from pathlib import Path

from graphnorm.panel.reference import (APPROVED_NAME, MIN_MOLECULES, Reference, approved_drugs,
                                       quantiles_of)
from graphnorm.panel.record import panel_file_sha256


def build_reference(folder, smiles: list[str], name: str, source: str,
                    progress: bool = True) -> Reference:
    """Predict ``smiles`` with ``folder``'s panel (its shown endpoints, no reference of its
    own read) and write the quantiles of each endpoint to ``folder``'s reference file."""
    from .admet_panel import AdmetPanel

    panel = AdmetPanel.load(folder, reference=False)
    frame = panel.predict(smiles, progress=progress)
    ok = (frame["error"] == "").to_numpy()
    if ok.sum() < MIN_MOLECULES:
        raise ValueError(f"{source}: {int(ok.sum())} molecules the panel could predict; a "
                         f"reference needs at least {MIN_MOLECULES}")
    reference = Reference(name, source, int(ok.sum()), panel_file_sha256(folder),
                          quantiles_of(frame[ok], [e.task for e in panel.entries]))
    reference.write(folder)
    return reference


def run_reference(args) -> int:
    folder = Path(args.run)
    if args.molecules:
        from .predict import read_input

        table = read_input(args.molecules, args.smiles_column)
        smiles, source = table.smiles, str(args.molecules)
        name = args.name or Path(args.molecules).stem
    else:
        smiles, source = approved_drugs(args.raw_dir)
        name = args.name or APPROVED_NAME
    reference = build_reference(folder, smiles, name, source, progress=not args.quiet)
    print(f"[graphnorm panel] {folder / 'reference.json'}: {len(reference.quantiles)} endpoints' "
          f"percentiles among {reference.molecules} of {len(smiles)} molecules ({name})")
    return 0
