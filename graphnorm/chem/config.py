"""`FeaturizerConfig`: the settings that data and model must share, defined once.

The vocabulary fixes the atom/bond feature columns (the model's embedding tables); `max_hops`
is the length of the edge paths (the model's hop matrices); `max_dist` caps shortest-path
distances (the model's distance buckets); `fingerprint_bits` > 0 adds each molecule's Morgan
fingerprint (the model's [VNode] input layer). A training run carries one config; it keys the
dataset cache and sizes the model, and the checkpoint stores it so that `predict`, `embed`
and `analyze` featurize exactly as training did.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .descriptors import descriptor_set
from .paths import UNREACHABLE  # spd of unreachable pairs (uint8): max_dist stays below it

FEATURIZER_VERSION = 1  # bump whenever any produced array changes: it keys the dataset cache
VOCABS = ("ogb", "zinc")
MAX_FINGERPRINT_BITS = 16384

ZINC_ATOM_DIMS = (28,)  # the ZINC (benchmarking-gnns) atom dictionary
ZINC_BOND_DIMS = (3,)  # single, double, triple (kekulized)


def vocab_dims(vocab: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Atom and bond feature sizes of a vocabulary ("zinc" or "ogb")."""
    if vocab == "zinc":
        return ZINC_ATOM_DIMS, ZINC_BOND_DIMS
    if vocab == "ogb":
        from ogb.utils.features import get_atom_feature_dims, get_bond_feature_dims

        return tuple(get_atom_feature_dims()), tuple(get_bond_feature_dims())
    raise ValueError(f"unknown vocab {vocab!r}; expected one of {VOCABS}")


@dataclass(frozen=True)
class FeaturizerConfig:
    vocab: str = "ogb"  # "ogb" (any organic molecule) or "zinc" (the ZINC benchmark's dictionary)
    max_hops: int = 5  # edges per shortest path that the edge encoding sees
    max_dist: int = 20  # shortest-path distances are capped here
    version: int = FEATURIZER_VERSION
    # Morgan fingerprint (radius 2, ECFP4-like bits, stored 8 per byte) per molecule, 0 = none;
    # the Graphormer adds its projection to the [VNode] (Chemprop-style molecule features)
    fingerprint_bits: int = 0
    # RDKit 2D descriptors per molecule (chem/descriptors.py): False, True (RDKit's 2D list;
    # "rdkit2d" is read as True) or "fast" (RDKit's C++ descriptors); the model standardizes
    # them with the training split's statistics and feeds them to its head
    descriptors: bool | str = False

    def __post_init__(self):
        if self.vocab not in VOCABS:
            raise ValueError(f"featurizer vocab must be one of {VOCABS}, got {self.vocab!r}")
        for name in ("max_hops", "max_dist", "version", "fingerprint_bits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"featurizer {name} must be an integer, got {value!r}")
        if self.max_hops < 0:
            raise ValueError(f"featurizer max_hops must be >= 0, got {self.max_hops}")
        if not 0 <= self.max_dist < UNREACHABLE:
            raise ValueError(f"featurizer max_dist must be in [0, {UNREACHABLE - 1}], "
                             f"got {self.max_dist}")
        # True stays True (not "rdkit2d"): it keys the caches and checksums of earlier runs
        object.__setattr__(self, "descriptors", descriptor_set(self.descriptors))
        if not 0 <= self.fingerprint_bits <= MAX_FINGERPRINT_BITS or self.fingerprint_bits % 8:
            raise ValueError(f"featurizer fingerprint_bits must be a multiple of 8 in [0, "
                             f"{MAX_FINGERPRINT_BITS}] (0 = none; e.g. 1024 or 2048), got "
                             f"{self.fingerprint_bits}")

    def to_dict(self) -> dict:
        """All fields, except ``fingerprint_bits`` when 0 and ``descriptors`` when off: the
        dict keys the dataset cache and the data checksum, which stay those of configs from
        before those fields existed."""
        d = dataclasses.asdict(self)
        for key in ("fingerprint_bits", "descriptors"):
            if not d[key]:
                del d[key]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "FeaturizerConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown featurizer keys {unknown}; valid: {sorted(names)}")
        return cls(**d)

    @property
    def feature_dims(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(atom, bond) feature sizes: the model's embedding tables."""
        return vocab_dims(self.vocab)

    @property
    def tag(self) -> str:
        """Short name for cache folders, e.g. ``h5-d20`` (``h5-d20-fp1024`` with fingerprints,
        ``-rd`` with RDKit's 2D descriptors, ``-rdfast`` with the fast set)."""
        return f"h{self.max_hops}-d{self.max_dist}" + (
            f"-fp{self.fingerprint_bits}" if self.fingerprint_bits else "") + (
            "-rdfast" if self.descriptors == "fast" else "-rd" if self.descriptors else "")

    def check_current(self, what: str) -> None:
        """Refuse data featurized by another featurizer version (``what`` names its source)."""
        if self.version != FEATURIZER_VERSION:
            raise ValueError(f"{what} was featurized with featurizer version {self.version}, "
                             f"this graphnorm has version {FEATURIZER_VERSION}; retrain, or "
                             "install the graphnorm version that wrote it")
