"""The units of the corpus's endpoints where its ``tasks.csv`` leaves them blank or garbled.

``admet_corpus/<corpus>/tasks.csv`` states units or a transform in ``description`` for some
tasks only; the panel shows values "in the endpoint's units", so a blank there leaves a user a
number without a scale. What is written here comes from each corpus's own documentation
(``meta.json``'s summary, the corpus README) and is checked against the value ranges in
``tasks.csv``; where the source does not say the unit of a logged quantity, the text says so
instead of guessing one.
"""
from __future__ import annotations

import re

_MTFT = "ADME_MTFT's log10 transform, units as its source"
UNITS: dict[str, str] = {
    # clinfo/ADME_MTFT (Ito et al.): "log10 CLint, fe, fu_brain, fu_p human/rat, log10 net
    # efflux ratio human, log10 Papp Caco-2 / LLC-PK1, log10 brain/plasma ratio rat, log10
    # solubility"; fe and the fu columns lie in [0, 1]
    "adme_mtft/clint": f"log10 intrinsic clearance ({_MTFT})",
    "adme_mtft/fe": "fraction excreted unchanged in urine (0-1)",
    "adme_mtft/fubrain": "fraction unbound in brain (0-1)",
    "adme_mtft/fup_human": "fraction unbound in human plasma (0-1)",
    "adme_mtft/fup_rat": "fraction unbound in rat plasma (0-1)",
    "adme_mtft/ner_human": "log10 net efflux ratio, human",
    "adme_mtft/papp_caco2": f"log10 Caco-2 permeability ({_MTFT})",
    "adme_mtft/papp_llc": f"log10 LLC-PK1 permeability ({_MTFT})",
    "adme_mtft/rb_rat": "log10 brain/plasma concentration ratio, rat",
    "adme_mtft/sol": f"log10 solubility ({_MTFT})",
    # mindrank-ai/PharmaBench README: logD; water solubility log10 nM; PPB fraction; CYP
    # log10 µM (log10 taken by the corpus); microsomal clearance log10 mL/min/g
    "pharmabench/logd_reg": "logD7.4",
    "pharmabench/water_sol_reg": "log10 solubility (nM)",
    "pharmabench/ppb_reg": "fraction bound to plasma proteins (0-1)",
    "pharmabench/hum_mic_cl_reg": "log10 human microsomal clearance (mL/min/g)",
    "pharmabench/mou_mic_cl_reg": "log10 mouse microsomal clearance (mL/min/g)",
    "pharmabench/rat_mic_cl_reg": "log10 rat microsomal clearance (mL/min/g)",
    "pharmabench/cyp_2c9_reg": "log10 IC50 (µM)",
    "pharmabench/cyp_2d6_reg": "log10 IC50 (µM)",
    "pharmabench/cyp_3a4_reg": "log10 IC50 (µM)",
    "b3db/logBB": "logBB, log10 brain/blood concentration ratio",
    "molnet_bace/bace_pIC50": "pIC50 (-log10 IC50 in M), BACE-1",
}
# (pattern over "<corpus>/<task>", units): whole families named alike
PATTERNS: tuple[tuple[str, str], ...] = (
    # molML/MoleculeACE: "measured bioactivity (pKi / pEC50, ChEMBL 29)"; the task names the
    # ChEMBL target
    (r"^moleculeace_chembl30/(CHEMBL\d+)_Ki$", r"pKi (-log10 Ki in M), target \1"),
    (r"^moleculeace_chembl30/(CHEMBL\d+)_EC50$", r"pEC50 (-log10 EC50 in M), target \1"),
    # netknowledge_admet's NCATS LD50 descriptions lost their minus sign ("(?log(mol/kg))")
    (r"^netknowledge_admet/toxicity_NCATS_LD50_(rat|mouse)_(\w+)$", r"\1 \2 LD50, -log10(mol/kg)"),
)


def units_of(key: str, stated: str = "") -> str:
    """The units of endpoint ``key`` (``<corpus>/<task>``): this module's, else what its
    tasks.csv states (``stated``)."""
    if key in UNITS:
        return UNITS[key]
    for pattern, units in PATTERNS:
        if re.match(pattern, key):
            return re.sub(pattern, units, key)
    return stated
