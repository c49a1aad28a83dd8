"""The ADMET panel's contract: the typed records of ``panel.json`` (`record`) and the booster
bundle beside it (`boosters`), what `graphnorm.pretrain` writes and `graphnorm.inference`,
`graphnorm.explain` and `graphnorm.serve` read; no other module reads the files' keys.
"""
from .record import (BACKBONE, BOOSTER, PANEL_FILE, Domain, Endpoint, Panel, PanelFileError,
                     nearest_distance)

__all__ = ["BACKBONE", "BOOSTER", "PANEL_FILE", "Domain", "Endpoint", "Panel", "PanelFileError",
           "nearest_distance"]
