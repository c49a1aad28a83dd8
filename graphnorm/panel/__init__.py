"""The ADMET panel of a pre-trained run, one package: its contract and its building.

- the contract: the typed records of ``panel.json`` (`record`) and the booster bundle beside
  it (`boosters`), what `graphnorm.inference`, `graphnorm.explain` and `graphnorm.serve` read;
  no module outside this package reads the files' keys;
- the building, on a run `graphnorm.pretrain` trained: which endpoints hold up (`build`), the
  one-table boosters that beat the head (`readouts`, `hybrid`), a related quantity's column
  (`related`), the head and a booster half and half (`blend`), the model card (`card`),
  installing it (`ship`); and the yardsticks: backbones compared (`compare`), against one gbm
  per table (`versus_gbm`), against a peer's panel (`versus`), with one paired bootstrap
  (`bootstrap`). Each is a ``graphnorm panel`` command (graphnorm/cli/panel.py).
"""
from .record import (BACKBONE, BLEND, BOOSTER, PANEL_FILE, RELATED, Domain, Endpoint, Panel,
                     PanelFileError, nearest_distance, platt_probability)

__all__ = ["BACKBONE", "BLEND", "BOOSTER", "PANEL_FILE", "RELATED", "Domain", "Endpoint", "Panel", "PanelFileError",
           "nearest_distance", "platt_probability"]
