"""The map of endpoints to quantities: which source column measures which quantity, in which
unit, and how it converts to the quantity's one unit.

An *endpoint* is one source's column (``<corpus>/<task>`` in ``admet_corpus``, ``tdc/<task>``
for a TDC ADMET table); a *quantity* is what a chemist asks for (logD7.4, aqueous solubility,
human microsomal CLint), in one unit. Several sources measure one quantity with their own
assay's bias; a model that reads the map learns one target per quantity with an offset per
source, instead of 2-5 unrelated columns.

Every entry states the source's unit as the source states it (its ``tasks.csv`` description,
README or paper; `graphnorm.pretrain.corpus_units` for the corpus's blanks) and a named
conversion (`units.CONVERSIONS`) that reads exactly that unit. An endpoint whose unit or
species its source does not state is left out with the reason (`UNMAPPED`): a guess would mix
two scales silently. Binary quantities (hERG block, Ames mutagenicity, BBB penetration, CYP
inhibition) tie binary sources whose label 1 is the same positive call; each source's
threshold (hERG at 1, 5, 10 or 30 µM) differs, and its learned logit offset absorbs it.
`tests/quantities` checks on the real corpus that the sources of each agree on the molecules
they share (a source read with its labels flipped would disagree).
"""
from __future__ import annotations

from dataclasses import dataclass

from graphnorm.tasks import CLASSIFICATION, REGRESSION

from . import units as u
from .units import conversion

BINARY = CLASSIFICATION.stored


class QuantityError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    name: str
    title: str
    unit: str
    kind: str = REGRESSION.stored  # graphnorm.tasks' stored kind: regression or binary


@dataclass(frozen=True)
class Source:
    endpoint: str  # "<corpus>/<task>" or "tdc/<task>"
    quantity: str
    stated: str  # the unit as the source states it
    convert: str = "same"  # a name in units.CONVERSIONS, or "same"
    assay: str = ""  # what distinguishes it from the quantity's other sources


QUANTITIES: dict[str, Quantity] = {q.name: q for q in (
    Quantity("logd74", "logD at pH 7.4", u.LOG_D),
    Quantity("solubility", "aqueous solubility", u.LOG_MOLAR),
    Quantity("clint_microsomal_human", "human liver microsomal intrinsic clearance", u.LOG_CLINT_MIC),
    Quantity("clint_microsomal_rat", "rat liver microsomal intrinsic clearance", u.LOG_CLINT_MIC),
    Quantity("clint_microsomal_mouse", "mouse liver microsomal intrinsic clearance", u.LOG_CLINT_MIC),
    Quantity("clint_hepatocyte_human", "human hepatocyte intrinsic clearance", u.LOG_CLINT_HEP),
    Quantity("clint_hepatocyte_rat", "rat hepatocyte intrinsic clearance", u.LOG_CLINT_HEP),
    Quantity("papp_caco2", "Caco-2 apparent permeability (A->B)", u.LOG_CM_S),
    Quantity("fu_plasma_human", "fraction unbound in human plasma", u.LOG_FRACTION),
    Quantity("fu_plasma_rat", "fraction unbound in rat plasma", u.LOG_FRACTION),
    Quantity("fu_plasma_mouse", "fraction unbound in mouse plasma", u.LOG_FRACTION),
    Quantity("fu_plasma_dog", "fraction unbound in dog plasma", u.LOG_FRACTION),
    Quantity("fu_brain", "fraction unbound in brain homogenate", u.LOG_FRACTION),
    Quantity("logbb", "brain/blood concentration ratio", u.LOG_BB),
    Quantity("ld50_rat_oral", "acute oral toxicity in rat, LD50", u.NEG_LOG_MOL_KG),
    Quantity("vdss_human", "volume of distribution at steady state, human", u.LOG_L_KG),
    Quantity("half_life_human", "elimination half-life, human", u.LOG_HOURS),
    Quantity("herg_block", "hERG channel block", u.POSITIVE, BINARY),
    Quantity("ames", "Ames mutagenicity", u.POSITIVE, BINARY),
    Quantity("bbb", "blood-brain barrier penetration (BBB+)", u.POSITIVE, BINARY),
    Quantity("cyp2c9_inhibition", "CYP2C9 inhibition", u.POSITIVE, BINARY),
    Quantity("cyp2d6_inhibition", "CYP2D6 inhibition", u.POSITIVE, BINARY),
    Quantity("cyp3a4_inhibition", "CYP3A4 inhibition", u.POSITIVE, BINARY),
)}

_NK, _AZ = "netknowledge_admet", "AstraZeneca ChEMBL deposit"
SOURCES: tuple[Source, ...] = (
    Source(f"{_NK}/lipophilicity_AZ-lipo", "logd74", u.LOG_D, assay=_AZ),
    Source("molnet_physchem/lipo_az_logD74", "logd74", u.LOG_D, assay=f"{_AZ} (MoleculeNet copy)"),
    Source("pharmabench/logd_reg", "logd74", u.LOG_D, assay="ChEMBL logD assays (PharmaBench)"),
    Source("tdc/lipophilicity_astrazeneca", "logd74", u.LOG_D, assay=f"{_AZ} (TDC copy)"),
    Source(f"{_NK}/solubility_EPA-sol", "solubility", u.LOG_MOLAR, assay="EPA water solubility"),
    Source(f"{_NK}/solubility_ESOL", "solubility", u.LOG_MOLAR, assay="Delaney (ESOL)"),
    Source("molnet_physchem/esol_logS", "solubility", u.LOG_MOLAR, assay="Delaney (MoleculeNet copy)"),
    Source(f"{_NK}/solubility_AZ-sol", "solubility", u.LOG_MOLAR,
           assay=f"{_AZ}: pH 7.4 buffer from dried DMSO solution"),
    Source("pharmabench/water_sol_reg", "solubility", u.LOG_NANOMOLAR, "log_nM_to_log_M",
           assay="ChEMBL solubility assays (PharmaBench)"),
    Source("tdc/solubility_aqsoldb", "solubility", u.LOG_MOLAR, assay="AqSolDB (TDC)"),
    Source(f"{_NK}/microsomal_AZ-hLM", "clint_microsomal_human", u.LOG_CLINT_MIC, assay=_AZ),
    Source("pharmabench/hum_mic_cl_reg", "clint_microsomal_human", u.LOG_CLINT_MIC,
           assay="ChEMBL microsomal assays (PharmaBench)"),
    Source("tdc/clearance_microsome_az", "clint_microsomal_human", u.CLINT_MIC,
           "clint_mic_to_log", assay=f"{_AZ} (TDC copy)"),
    Source("pharmabench/rat_mic_cl_reg", "clint_microsomal_rat", u.LOG_CLINT_MIC,
           assay="ChEMBL microsomal assays (PharmaBench)"),
    Source("pharmabench/mou_mic_cl_reg", "clint_microsomal_mouse", u.LOG_CLINT_MIC,
           assay="ChEMBL microsomal assays (PharmaBench)"),
    Source(f"{_NK}/hepatocyte_AZ-hH", "clint_hepatocyte_human", u.LOG_CLINT_HEP, assay=_AZ),
    Source("tdc/clearance_hepatocyte_az", "clint_hepatocyte_human", u.CLINT_HEP,
           "clint_hep_to_log", assay=f"{_AZ} (TDC copy)"),
    Source(f"{_NK}/hepatocyte_AZ-rH", "clint_hepatocyte_rat", u.LOG_CLINT_HEP, assay=_AZ),
    Source(f"{_NK}/permeability_CSU-Caco2", "papp_caco2", u.LOG_CM_S, assay="CSU Caco-2 set"),
    Source(f"{_NK}/permeability_USTL-Caco2", "papp_caco2", u.LOG_CM_S, assay="USTL Caco-2 set"),
    Source("tdc/caco2_wang", "papp_caco2", u.LOG_CM_S, assay="Wang et al. (TDC)"),
    Source(f"{_NK}/PPB_AZ-hPPB", "fu_plasma_human", u.LOG_PERCENT_UNBOUND,
           "log_pct_unbound_to_log_fu", assay=_AZ),
    Source("adme_mtft/fup_human", "fu_plasma_human", u.FRACTION_UNBOUND, "fu_to_log",
           assay="ADME_MTFT compilation"),
    Source("tdc/ppbr_az", "fu_plasma_human", u.PERCENT_BOUND, "pct_bound_to_log_fu",
           assay=f"{_AZ} (TDC copy)"),
    Source(f"{_NK}/PPB_AZ-rPPB", "fu_plasma_rat", u.LOG_PERCENT_UNBOUND,
           "log_pct_unbound_to_log_fu", assay=_AZ),
    Source("adme_mtft/fup_rat", "fu_plasma_rat", u.FRACTION_UNBOUND, "fu_to_log",
           assay="ADME_MTFT compilation"),
    Source(f"{_NK}/PPB_AZ-mPPB", "fu_plasma_mouse", u.LOG_PERCENT_UNBOUND,
           "log_pct_unbound_to_log_fu", assay=_AZ),
    Source(f"{_NK}/PPB_AZ-dPPB", "fu_plasma_dog", u.LOG_PERCENT_UNBOUND,
           "log_pct_unbound_to_log_fu", assay=_AZ),
    Source("adme_mtft/fubrain", "fu_brain", u.FRACTION_UNBOUND, "fu_to_log",
           assay="ADME_MTFT compilation"),
    Source("b3db/logBB", "logbb", u.LOG_BB, assay="B3DB compilation"),
    Source(f"{_NK}/toxicity_NCATS_LD50_rat_oral", "ld50_rat_oral", u.NEG_LOG_MOL_KG,
           assay="NCATS acute toxicity"),
    Source("tdc/ld50_zhu", "ld50_rat_oral", u.NEG_LOG_MOL_KG, assay="Zhu et al. (TDC)"),
    Source("tdc/vdss_lombardo", "vdss_human", u.L_KG, "l_kg_to_log", assay="Lombardo et al. (TDC)"),
    Source("tdc/half_life_obach", "half_life_human", u.HOURS, "hours_to_log",
           assay="Obach et al. (TDC)"),
    Source("tdc/herg", "herg_block", u.POSITIVE, assay="Wang et al. hERG blockers (TDC)"),
    Source("tdc_tox_extra/herg_karim", "herg_block", u.POSITIVE, assay="Karim 2021, 10 µM"),
    *(Source(f"toxric30/Cardiotoxicity_{um}", "herg_block", u.POSITIVE,
             assay=f"TOXRIC hERG at {um} µM") for um in (1, 5, 10, 30)),
    Source("tdc/ames", "ames", u.POSITIVE, assay="Xu et al. (TDC)"),
    Source("pharmabench/ames_cls", "ames", u.POSITIVE, assay="PharmaBench"),
    Source("toxric30/Ames_Mutagenicity", "ames", u.POSITIVE, assay="TOXRIC"),
    Source("tdc/bbb_martins", "bbb", u.POSITIVE, assay="Martins et al. (TDC)"),
    Source("b3db/bbb_permeable", "bbb", u.POSITIVE, assay="B3DB (partly logBB > -1)"),
    Source("pharmabench/bbb_cls", "bbb", u.POSITIVE, assay="PharmaBench"),
    Source("molnet_bbbp/p_np", "bbb", u.POSITIVE, assay="MoleculeNet BBBP"),
    *(Source(f"tdc/cyp{c}_veith", f"cyp{c}_inhibition", u.POSITIVE,
             assay="Veith et al. PubChem AID 1851 (TDC)") for c in ("2c9", "2d6", "3a4")),
    *(Source(f"toxric30/CYP{c.upper()}", f"cyp{c}_inhibition", u.POSITIVE, assay="TOXRIC")
      for c in ("2c9", "2d6", "3a4")),
)

# one measurement in several species: a sparse species' column may be read through another's
# (`graphnorm.panel.related`, chosen on held-out molecules); each group shares unit and kind
SPECIES_GROUPS: tuple[tuple[str, ...], ...] = (
    ("clint_microsomal_human", "clint_microsomal_rat", "clint_microsomal_mouse"),
    ("clint_hepatocyte_human", "clint_hepatocyte_rat"),
    ("fu_plasma_human", "fu_plasma_rat", "fu_plasma_mouse", "fu_plasma_dog"),
)

# endpoints that measure a mapped quantity but are left out, and why
UNMAPPED: dict[str, str] = {
    "adme_mtft/clint": "species and unit not stated (log10 CLint 'units as its source')",
    "adme_mtft/sol": "unit not stated (log10 solubility 'units as its source')",
    "adme_mtft/papp_caco2": "unit not stated (log10 Papp 'units as its source')",
    "pharmabench/ppb_reg": "species not stated (fraction bound, PharmaBench)",
}


def check_registry(quantities=None, sources=None, groups=None) -> None:
    """Refuse a map that would mix units: every source names a known quantity, at most once,
    and its conversion reads the unit it states and writes its quantity's unit; the
    quantities of a species group share one unit and kind."""
    quantities = QUANTITIES if quantities is None else quantities
    sources = SOURCES if sources is None else sources
    for group in SPECIES_GROUPS if groups is None else groups:
        unknown = [q for q in group if q not in quantities]
        if unknown:
            raise QuantityError(f"species group {group}: unknown quantity {unknown[0]!r}")
        if len({(quantities[q].unit, quantities[q].kind) for q in group}) > 1:
            raise QuantityError(f"species group {group}: its quantities differ in unit or kind")
    seen = set()
    for s in sources:
        if s.endpoint in seen:
            raise QuantityError(f"{s.endpoint}: mapped twice")
        seen.add(s.endpoint)
        if s.quantity not in quantities:
            raise QuantityError(f"{s.endpoint}: unknown quantity {s.quantity!r}; known: "
                                f"{', '.join(quantities)}")
        try:
            conv = conversion(s.convert, s.stated)
        except KeyError as err:
            raise QuantityError(f"{s.endpoint}: {err.args[0]}") from None
        want = quantities[s.quantity].unit
        if conv.reads != s.stated or conv.writes != want:
            raise QuantityError(
                f"{s.endpoint} states {s.stated!r}; conversion {s.convert!r} reads "
                f"{conv.reads!r} and writes {conv.writes!r}, but {s.quantity} is in {want!r}: "
                "the source's unit does not match its quantity's")


def related_quantities(quantity: str) -> tuple[str, ...]:
    """The same measurement in the other species of ``quantity``'s group (`SPECIES_GROUPS`);
    () for a quantity in none."""
    group = next((g for g in SPECIES_GROUPS if quantity in g), ())
    return tuple(q for q in group if q != quantity)


def sources_of(quantity: str) -> list[Source]:
    if quantity not in QUANTITIES:
        raise QuantityError(f"unknown quantity {quantity!r}; known: {', '.join(QUANTITIES)}")
    return [s for s in SOURCES if s.quantity == quantity]


def sources_recorded(recorded: dict | None) -> tuple:
    """The `SOURCES` of a recorded map ({endpoint: quantity}, as a run's data.json keeps it);
    None: all of them. A recorded endpoint this map no longer has, or maps elsewhere, is
    refused by name: the run would change what it learns."""
    if recorded is None:
        return SOURCES
    by_endpoint = {s.endpoint: s for s in SOURCES}
    lost = {e: q for e, q in recorded.items()
            if e not in by_endpoint or by_endpoint[e].quantity != q}
    if lost:
        raise QuantityError(f"the run maps {lost} differently from this graphnorm's map of "
                            "endpoints to quantities: continue it with the graphnorm that "
                            "started it, or start a new run")
    return tuple(s for s in SOURCES if s.endpoint in recorded)


def source_of(endpoint: str):
    """The `Source` of ``endpoint``, or None when it is not mapped."""
    return next((s for s in SOURCES if s.endpoint == endpoint), None)
