"""Unit conversions from what a source states to a quantity's one unit.

A conversion is named, and says which unit it reads and which it writes: a source may use it
only when its stated unit is the one read and its quantity's unit the one written
(`registry.check_registry`), so two units are never mixed by a typo in a table.
Fractions go to log10 with a floor (`FRACTION_FLOOR`): a measured fraction unbound of 0 is
below the assay's limit, not minus infinity.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

FRACTION_FLOOR = 1e-4  # 0.01 %: below every plasma/brain binding assay's quantitation limit

# the units a source may state and a quantity may hold
LOG_D = "log10 D (octanol/buffer, pH 7.4)"
LOG_MOLAR = "log10 mol/L"
LOG_NANOMOLAR = "log10 nmol/L"
LOG_CLINT_MIC = "log10 mL/min/g protein (= µL/min/mg)"
CLINT_MIC = "mL/min/g protein (= µL/min/mg)"
LOG_CLINT_HEP = "log10 µL/min/10^6 cells"
CLINT_HEP = "µL/min/10^6 cells"
LOG_CM_S = "log10 cm/s"
LOG_FRACTION = "log10 fraction unbound"
LOG_PERCENT_UNBOUND = "log10 % unbound"
FRACTION_UNBOUND = "fraction unbound (0-1)"
PERCENT_BOUND = "% bound (0-100)"
NEG_LOG_MOL_KG = "-log10 mol/kg"
LOG_BB = "log10 brain/blood concentration ratio"
L_KG = "L/kg"
LOG_L_KG = "log10 L/kg"
HOURS = "h"
LOG_HOURS = "log10 h"
# a binary endpoint: 1 = the positive call (inhibitor, blocker, mutagen, BBB+); each source
# draws the line at its own threshold, which its per-source offset absorbs
POSITIVE = "binary, 1 = positive"


@dataclass(frozen=True)
class Conversion:
    reads: str
    writes: str
    apply: Callable[[np.ndarray], np.ndarray]


def _log10_floor(x: np.ndarray) -> np.ndarray:
    return np.log10(np.maximum(x, FRACTION_FLOOR))


def identity(unit: str) -> Conversion:
    return Conversion(unit, unit, lambda x: x)


CONVERSIONS: dict[str, Conversion] = {
    "log_nM_to_log_M": Conversion(LOG_NANOMOLAR, LOG_MOLAR, lambda x: x - 9.0),
    "clint_mic_to_log": Conversion(CLINT_MIC, LOG_CLINT_MIC, lambda x: np.log10(x)),
    "clint_hep_to_log": Conversion(CLINT_HEP, LOG_CLINT_HEP, lambda x: np.log10(x)),
    "log_pct_unbound_to_log_fu": Conversion(LOG_PERCENT_UNBOUND, LOG_FRACTION,
                                            lambda x: np.maximum(x - 2.0, np.log10(FRACTION_FLOOR))),
    "fu_to_log": Conversion(FRACTION_UNBOUND, LOG_FRACTION, _log10_floor),
    "pct_bound_to_log_fu": Conversion(PERCENT_BOUND, LOG_FRACTION,
                                      lambda x: _log10_floor((100.0 - x) / 100.0)),
    "l_kg_to_log": Conversion(L_KG, LOG_L_KG, lambda x: np.log10(x)),
    "hours_to_log": Conversion(HOURS, LOG_HOURS, lambda x: np.log10(x)),
}


def conversion(name: str, unit: str) -> Conversion:
    """The conversion ``name`` (``"same"``: none, the source states ``unit``)."""
    if name == "same":
        return identity(unit)
    if name not in CONVERSIONS:
        raise KeyError(f"unknown conversion {name!r}; known: same, {', '.join(CONVERSIONS)}")
    return CONVERSIONS[name]
