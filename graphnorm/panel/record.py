"""The panel file (``panel.json``) as typed records: what ``graphnorm admet`` predicts from.

A panel lists every trained endpoint of a pre-trained model with its held-out scores
(`Endpoint`), the far-from-training yardstick (`Domain`) and the files it belongs with (the
checkpoint's and the booster bundle's sha256). It is written by `graphnorm.pretrain` (the
held-out selection rule; the boosters that beat the head) and read by `graphnorm.inference`,
`graphnorm.explain` and `graphnorm.serve` through these records only: no reader looks a key
up in the JSON.

The file keeps one endpoint per line and the centroids on one (readable diffs, a small
file); `Panel.read` then `Panel.write` reproduces a file byte for byte.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

PANEL_FILE = "panel.json"
BOOSTER = "booster"  # an endpoint's ``readout`` when a one-table booster predicts it
BACKBONE = "backbone"  # a booster's ``features`` when it also reads the network
RELATED = "related"  # an endpoint's ``readout`` when it is read through a related column
BLEND = "blend"  # an endpoint's ``readout`` when the head and a booster predict it, half each


class PanelFileError(ValueError):
    """A panel file that does not load: missing, not JSON, or not this format."""


@dataclass(frozen=True)
class Endpoint:
    """One trained endpoint: its held-out scores on the selection half S (``*_select``) and
    the report half R, and how it is shown."""
    task: str  # "<corpus>/<column>"
    kind: str  # graphnorm.tasks: "binary" | "regression"
    units: str
    n_select: int  # labelled molecules on S
    n: int  # labelled molecules on R
    judged: bool  # enough labels on both halves to be judged at all
    metric: str  # "rocauc" | "r2"
    score_select: Optional[float]
    score: Optional[float]  # R's: what the panel reports
    shown: bool
    halfwidth: Optional[float] = None  # regression: the 90 % split-conformal half-width
    ece_uncalibrated: Optional[float] = None  # binary: R's calibration error of sigmoid(z)
    ece: Optional[float] = None  # ... and of the Platt-scaled probability
    platt: Optional[tuple] = None  # binary: (a, b), probability sigmoid(a z + b)
    readout: Optional[str] = None  # BOOSTER (a one-table booster predicts it), RELATED or BLEND
    features: Optional[str] = None  # what its booster reads: "morgan" | BACKBONE
    head: Optional[dict] = None  # the head's own scores the booster replaced
    # a quantity run (`pretrain --targets quantities`): a source's quantity, and a quantity
    # endpoint's ("quantity/<name>") checkpoint output, the source whose assay scale it shows
    quantity: Optional[str] = None
    output: Optional[str] = None
    # RELATED (`panel.related`): the value is a + b x the head's value of checkpoint output
    # ``via`` (a related quantity's column, e.g. human for mouse CLint); ``affine`` = (a, b)
    via: Optional[str] = None
    affine: Optional[tuple] = None

    @property
    def is_quantity(self) -> bool:
        """One column for a quantity several sources measure (scored on all their labels)."""
        return self.output is not None

    @property
    def binary(self) -> bool:
        from graphnorm.tasks import CLASSIFICATION

        return self.kind == CLASSIFICATION.stored

    @property
    def by_booster(self) -> bool:
        """Whether a one-table booster predicts it rather than the network's head."""
        return self.readout == BOOSTER

    @property
    def by_head(self) -> bool:
        """Whether the network's head alone predicts it (no readout replaced or joined it)."""
        return self.readout is None

    @property
    def by_blend(self) -> bool:
        """Whether the mean of the head's value and a booster's predicts it (`panel.blend`)."""
        return self.readout == BLEND

    @property
    def uses_booster(self) -> bool:
        """Whether a booster of the panel's bundle takes part in predicting it."""
        return self.by_booster or self.by_blend

    @property
    def by_related(self) -> bool:
        """Whether it is read through a related quantity's column (``via``, ``affine``)."""
        return self.readout == RELATED

    @property
    def predictor(self) -> str:
        """What predicts it, in words: "head", "booster", "head + booster" or "related: <via>"."""
        return "booster" if self.by_booster else "head + booster" if self.by_blend else \
            f"related: {self.via}" if self.by_related else "head"

    @property
    def reads_network(self) -> bool:
        """Whether its booster also reads the network's embedding and outputs."""
        return self.by_booster and self.features == BACKBONE

    @property
    def platt_scale(self) -> tuple[float, float]:
        """(a, b) of the probability shown, sigmoid(a z + b); (1, 0) without a fit."""
        return (float(self.platt[0]), float(self.platt[1])) if self.platt else (1.0, 0.0)

    def to_dict(self) -> dict:
        """The file's entry: the kind's fields always (``halfwidth`` for regression, the
        calibration errors for binary), the others when set, in the file's order."""
        d = {f: getattr(self, f) for f in _ALWAYS}
        if self.binary:
            d.update(ece_uncalibrated=self.ece_uncalibrated, ece=self.ece)
            if self.platt is not None:
                d["platt"] = list(self.platt)
        else:
            d["halfwidth"] = self.halfwidth
        d["shown"] = self.shown
        for f in ("readout", "features", "head", "quantity", "output", "via"):
            if getattr(self, f) is not None:
                d[f] = getattr(self, f)
        if self.affine is not None:
            d["affine"] = list(self.affine)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Endpoint":
        missing = [f for f in _ALWAYS + ("shown",) if f not in d]
        unknown = sorted(set(d) - _FIELDS)
        if missing or unknown:
            raise PanelFileError(f"endpoint {d.get('task', '?')!r}: "
                                 + (f"missing {missing}" if missing else f"unknown {unknown}"))
        d = dict(d)
        for f in ("platt", "affine"):
            if d.get(f) is not None:
                d[f] = tuple(d[f])
        return cls(**d)


_ALWAYS = ("task", "kind", "units", "n_select", "n", "judged", "metric", "score_select", "score")
_FIELDS = {f.name for f in dataclasses.fields(Endpoint)}


@dataclass(frozen=True)
class Domain:
    """The far-from-training yardstick: a molecule whose [VNode] embedding lies farther from
    the nearest of the training molecules' k-means ``centroids`` than ``threshold`` (S's 95th
    percentile of that distance) is flagged."""
    centroids: list  # [K][D], as stored (5 decimals)
    threshold: float

    def array(self) -> np.ndarray:
        return np.asarray(self.centroids, dtype=np.float32)

    def distance(self, embeddings: np.ndarray) -> np.ndarray:
        return nearest_distance(embeddings, self.array())


def panel_file_sha256(folder) -> str:
    """sha256 of ``folder``'s panel.json: what a scoring names as the panel it scored and a
    model card checks a scoring against."""
    import hashlib

    return hashlib.sha256((Path(folder) / PANEL_FILE).read_bytes()).hexdigest()


def platt_probability(z, a=1.0, b=0.0) -> np.ndarray:
    """The probability an endpoint with Platt scale (a, b) shows for head logits ``z``:
    sigmoid(a z + b); (1, 0) is the raw sigmoid. expit, so a saturated logit of either sign
    gives 0 or 1 without numpy's overflow warning."""
    from scipy.special import expit

    return expit(a * np.asarray(z, float) + b)


def nearest_distance(embeddings: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Euclidean distance of each embedding to its nearest centroid."""
    c = np.asarray(centroids, dtype=np.float32)
    d2 = (embeddings ** 2).sum(1)[:, None] - 2 * embeddings @ c.T + (c ** 2).sum(1)[None]
    return np.sqrt(np.clip(d2.min(1), 0, None))


@dataclass
class Panel:
    checkpoint_sha256: str  # the best.ckpt it was built from
    corpus_sha256: str
    held_out_molecules: int
    selection_molecules: int
    rule: str  # where its rule is written
    thresholds: dict  # the rule's thresholds, as applied
    domain: Domain
    endpoints: list = field(default_factory=list)  # [Endpoint]
    readouts_sha256: Optional[str] = None  # the booster bundle it names (a hybrid panel)
    readout_rule: Optional[str] = None
    # a refit (`panel.refit`): the checkpoint of the held-out build whose choices, scores,
    # intervals and calibrations this panel carries; None: measured on this checkpoint
    refit_of: Optional[str] = None
    # an ensemble's folder (`panel.networks`): every member's checkpoint sha256, in order, the
    # first ``checkpoint_sha256``; None: one network
    member_sha256: Optional[list] = None

    @property
    def shown(self) -> int:
        return sum(e.shown for e in self.endpoints)

    def shown_endpoints(self) -> list:
        return [e for e in self.endpoints if e.shown]

    def endpoint(self, task: str) -> Optional[Endpoint]:
        return next((e for e in self.endpoints if e.task == task), None)

    @property
    def checkpoints(self) -> list:
        """The sha256 of each network it averages (one for a single network)."""
        return list(self.member_sha256) if self.member_sha256 else [self.checkpoint_sha256]

    def booster_tasks(self) -> list[str]:
        """The endpoints a booster of the bundle takes part in (alone or in a blend)."""
        return [e.task for e in self.endpoints if e.uses_booster]

    def replace(self, **changes) -> "Panel":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        d = {"checkpoint_sha256": self.checkpoint_sha256, "corpus_sha256": self.corpus_sha256,
             "held_out_molecules": self.held_out_molecules,
             "selection_molecules": self.selection_molecules, "rule": self.rule,
             "thresholds": self.thresholds, "shown": self.shown,
             "domain": {"centroids": self.domain.centroids, "threshold": self.domain.threshold}}
        if self.readouts_sha256 is not None:
            d.update(readouts_sha256=self.readouts_sha256, readout_rule=self.readout_rule)
        if self.refit_of is not None:
            d["refit_of"] = self.refit_of
        if self.member_sha256 is not None:
            d["member_sha256"] = list(self.member_sha256)
        d["endpoints"] = [e.to_dict() for e in self.endpoints]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Panel":
        try:
            domain = Domain(d["domain"]["centroids"], float(d["domain"]["threshold"]))
            endpoints = [Endpoint.from_dict(e) for e in d["endpoints"]]
            panel = cls(d["checkpoint_sha256"], d["corpus_sha256"], int(d["held_out_molecules"]),
                        int(d["selection_molecules"]), d["rule"], dict(d["thresholds"]), domain,
                        endpoints, d.get("readouts_sha256"), d.get("readout_rule"),
                        d.get("refit_of"), d.get("member_sha256"))
        except (KeyError, TypeError, ValueError) as err:
            if isinstance(err, PanelFileError):
                raise
            raise PanelFileError(f"not a panel ({type(err).__name__}: {err})") from err
        return panel  # its "shown" count is derived from the entries, not read

    @classmethod
    def read(cls, path) -> "Panel":
        """The panel of ``path`` (a file, or a folder holding `PANEL_FILE`); a file that is
        missing or not a panel is named."""
        path = Path(path)
        if path.is_dir():
            path = path / PANEL_FILE
        if not path.is_file():
            raise PanelFileError(f"{path}: no such panel file")
        try:
            return cls.from_dict(json.loads(path.read_text()))
        except (ValueError, PanelFileError) as err:
            raise PanelFileError(f"{path}: {err}") from err

    def write(self, folder) -> Path:
        """``folder/panel.json``, one endpoint per line (module docstring)."""
        from graphnorm.run_folder import json_safe

        path = Path(folder) / PANEL_FILE
        d = json_safe(self.to_dict())
        body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in d.items()
                          if k != "endpoints")
        endpoints = ",\n".join(f"  {json.dumps(e)}" for e in d["endpoints"])
        path.write_text("{\n" + body + ',\n "endpoints": [\n' + endpoints + "\n ]\n}\n")
        return path
