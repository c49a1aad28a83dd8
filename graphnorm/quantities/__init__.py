"""Quantities: one name and one unit for what several public sources measure (issue 68).

- `registry`: `QUANTITIES`, the `SOURCES` that measure each (stated unit, conversion, assay),
  the endpoints left out and why (`UNMAPPED`), and `check_registry`, which refuses a map that
  would mix units;
- `units`: the named conversions, each reading one unit and writing another;
- `harmonize`: a corpus read through the map: `to_quantity_units` converts each mapped
  source's column into its quantity's unit (one column per source: what pre-training's
  per-source offsets read), `harmonize` merges them into one task per quantity, each label
  keeping its source.

A layer beside `graphnorm.data`: it imports only `graphnorm.tasks`; it rebuilds the corpus it
is handed by that corpus's own type.
"""
from .harmonize import PREFIX, Harmonized, InQuantityUnits, harmonize, to_quantity_units
from .registry import (QUANTITIES, SOURCES, SPECIES_GROUPS, UNMAPPED, Quantity, QuantityError,
                       Source, check_registry, related_quantities, source_of, sources_of,
                       sources_recorded)

__all__ = ["PREFIX", "Harmonized", "InQuantityUnits", "harmonize", "to_quantity_units", "QUANTITIES", "SOURCES", "SPECIES_GROUPS", "UNMAPPED",
           "Quantity", "QuantityError", "Source", "check_registry", "related_quantities",
           "source_of", "sources_of", "sources_recorded"]
