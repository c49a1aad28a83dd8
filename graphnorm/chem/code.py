"""The fingerprint of the chemistry code: every array a cache holds (graph features, RDKit
descriptors, MapLight vectors) was computed by `graphnorm.chem`, so the caches are keyed by
its source too (`graphnorm.provenance.source_sha`), not by their inputs and a hand-bumped
version alone. Any edit under graphnorm/chem/ recomputes cached features once."""
from __future__ import annotations

import functools
from pathlib import Path


@functools.lru_cache(maxsize=1)
def chem_code_sha() -> str:
    """16 hex of sha256 of graphnorm/chem/*.py (read once per process: a long run keeps
    the code it loaded)."""
    from graphnorm.provenance import source_sha

    return source_sha(*Path(__file__).parent.glob("*.py"))
