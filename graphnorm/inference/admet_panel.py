"""``graphnorm admet``: a ready ADMET panel -- every endpoint of a pre-trained multi-task model
that held up on held-out molecules, in its units, with an interval and a flag when a molecule
is far from the training data.

The model is a ``graphnorm pretrain`` run's ``best.ckpt`` (one head output per corpus task),
or the members an ensemble folder averages (graphnorm/panel/networks.py), and the panel its
``panel.json`` (graphnorm/panel/build.py: which endpoints are shown, their held-out scores,
the conformal half-widths, the far-from-training yardstick). Both are read from one folder;
the panel names the checkpoints it was built from by their hashes, and a panel of other
checkpoints is refused.

    panel = AdmetPanel.load("runs/pretrain")
    frame = panel.predict(["CCO", "c1ccccc1O"])   # one row per molecule, in order

Per shown endpoint ``<corpus>/<task>``: the value (regression, in the units of
``panel.endpoints()``) or the probability (binary, Platt-scaled on the panel's selection
half); regression also ``<task>_lo``/``_hi``, the 90 % split-conformal interval. With a
reference beside the panel (`graphnorm.panel.reference`; the shipped panel's: FDA-approved
drugs), ``<task>_percentile`` says where the value stands among the reference's predictions
(0-100). ``far_from_training`` is True when the molecule's [VNode] embedding lies farther
from the training molecules' centroids than 95 % of held-out ones;
``warning`` says why a predicted row is an extrapolation (larger than any training molecule,
a wildcard atom: `predict.extrapolation_flag`; "" when none), ``error`` names
what went wrong with a row (its other columns are then empty).

Atom scores of one shown endpoint: ``graphnorm.explain.panel_attributions.explain_endpoint``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from graphnorm.panel import (PANEL_FILE, Panel, PanelFileError, nearest_distance,
                             platt_probability)

MODEL_FILE = "best.ckpt"
# the largest molecule a pre-training corpus kept before checkpoints recorded it (their
# train_domain counts what it left out as "too_large"): the shipped panel's networks
CORPUS_MAX_ATOMS = 100


class PanelError(ValueError):
    pass


class AdmetPanel:
    def __init__(self, loaded, panel: Panel, all_endpoints: bool = False, batch_size: int = 128,
                 boosters=None, reference=None):
        """``boosters``: the `PanelBoosters` of the panel's booster entries (None: it has
        none; `load` reads them); ``reference``: the `Reference` whose percentiles the rows
        get (None: no percentile columns)."""
        from graphnorm.inference.predict import Predictor

        self.loaded, self.panel, self.boosters = loaded, panel, boosters
        self.reference = reference
        names = list(loaded.targets)
        chosen = [e for e in panel.endpoints if all_endpoints or e.shown]
        if not chosen:
            raise PanelError("no endpoint of this panel held up on held-out molecules: "
                             "nothing to show (--all shows them with their scores)")
        # a quantity endpoint shows one checkpoint output (its reference source's)
        # a related entry reads another quantity's output through its affine map
        read = [e.via or e.output or e.task for e in chosen]
        missing = [name for name in read if name not in names]
        if missing:
            raise PanelError(f"the panel names tasks the model does not have: {missing[:3]}")
        self.entries = chosen
        # the columns a booster takes part in: alone, or half of a blend with the head
        self.by_booster = [j for j, e in enumerate(chosen) if e.uses_booster]
        self.blend = np.array([e.by_blend for e in chosen])
        if self.by_booster and boosters is None:
            raise PanelError("the panel predicts some endpoints with one-table boosters; load "
                             "it with AdmetPanel.load(folder), which reads them")
        self.index = np.array([names.index(name) for name in read], dtype=np.int64)
        self.mean = loaded.target_mean.numpy().reshape(-1)[self.index].copy()
        self.std = loaded.target_std.numpy().reshape(-1)[self.index].copy()
        for j, e in enumerate(chosen):  # a + b (z std + mean) = z (b std) + (a + b mean)
            if e.by_related:
                a, b = e.affine
                self.mean[j], self.std[j] = a + b * self.mean[j], b * self.std[j]
        self.binary = np.array([e.binary for e in chosen])
        # Platt scaling fitted on the selection half (panel.build.calibrated); (1, 0) = raw
        scale = np.array([e.platt_scale for e in chosen], dtype=float)
        self.platt_a, self.platt_b = scale[:, 0], scale[:, 1]
        self.centroids = panel.domain.array()
        self.threshold = panel.domain.threshold
        self.predictor = Predictor(loaded, batch_size=batch_size)
        domain = loaded.meta.get("train_domain", {})
        self.max_atoms = domain.get("max_atoms",
                                    CORPUS_MAX_ATOMS if "too_large" in domain else None)
        loaded.model.eval()

    @classmethod
    def load(cls, folder=None, all_endpoints: bool = False, batch_size: int = 128,
             reference: bool = True) -> "AdmetPanel":
        """The model and panel of a folder (``best.ckpt`` + ``panel.json``); None: the one
        shipped with graphnorm (`graphnorm.pretrained.admet_panel_folder`). ``reference``:
        read the folder's percentiles (`graphnorm.panel.reference`) when it has them."""
        from graphnorm.pretrained import PretrainedError, admet_panel_folder

        try:
            folder = Path(folder) if folder is not None else admet_panel_folder()
        except PretrainedError as err:
            raise PanelError(str(err)) from err
        panel_path = folder / PANEL_FILE
        for path in (folder / MODEL_FILE, panel_path):
            if not path.is_file():
                raise PanelError(f"{folder}: no {path.name} (a panel folder holds the model, "
                                 f"{MODEL_FILE}, and {PANEL_FILE} from `graphnorm panel "
                                 "build`)")
        try:
            panel = Panel.read(panel_path)
        except PanelFileError as err:
            raise PanelError(f"not a panel file: {err}") from err
        from graphnorm.panel.networks import check_built_for, load_networks

        try:
            check_built_for(panel, folder)
            loaded = load_networks(folder)
        except PanelFileError as err:
            raise PanelError(str(err)) from err
        from .panel_boosters import PanelBoosters

        descriptors = getattr(loaded.featurizer, "descriptors", None)
        boosters = PanelBoosters.load(folder, panel, descriptors or None, PanelError)
        from graphnorm.panel.reference import read_reference

        try:
            known = read_reference(folder) if reference else None
        except PanelFileError as err:
            raise PanelError(str(err)) from err
        return cls(loaded, panel, all_endpoints, batch_size, boosters, known)

    def endpoints(self) -> pd.DataFrame:
        """One row per endpoint predicted: task, kind, units, held-out metric, score, n,
        interval half-width (regression) or calibration error (binary)."""
        keys = ("task", "kind", "units", "metric", "score", "n", "halfwidth", "ece")
        return pd.DataFrame([{**{k: getattr(e, k) for k in keys},
                              "predictor": e.predictor}
                             for e in self.entries])

    def predict(self, smiles: Sequence[str], errors: Optional[list] = None,
                progress: bool = False) -> pd.DataFrame:
        """One row per SMILES, in order (module docstring). The input is featurized and
        predicted ``predictor.rows_per_pass`` molecules at a time, so a screening file of
        millions holds one slice's graphs and network outputs in memory, not all of them.
        ``progress``: a bar on stderr when it is a terminal, else a line per slice when the
        input has several (as `Predictor.predict`)."""
        from tqdm.auto import tqdm

        from graphnorm.data.build import bar_enabled, stage

        from .predict import extrapolation_flag

        smiles = list(smiles)
        errors = list(errors) if errors is not None else [""] * len(smiles)
        n, k, step = len(smiles), len(self.entries), self.predictor.rows_per_pass
        values = np.full((n, k), np.nan)
        distance = np.full(n, np.nan)
        # its corpus holds one wildcard molecule in ~340,000: a `*` is outside what it learned
        flags, wildcards = [""] * n, self.predictor.featurizer.vocab == "ogb"
        bar_on, lines = bar_enabled(progress), progress and n > step
        bar = tqdm(total=n, desc="admet panel", unit="mol", disable=not bar_on)
        for start in range(0, n, step):
            part = slice(start, min(n, start + step))
            graphs, errors[part] = self.predictor.featurize(smiles[part], errors[part])
            for i, g in graphs:
                flags[start + i] = extrapolation_flag(g, self.max_atoms, wildcards)
            # numpy slices are views: the pass writes into this slice's rows of the whole
            view = self.view(graphs, smiles[part], distance=distance[part], values=values[part])
            if self.by_booster and view.rows:
                self._boosted(values[part], view)
            bar.update(part.stop - start)
            if lines and not bar_on:
                stage(True, f"admet panel: {part.stop:,}/{n:,} molecules")
        bar.close()
        data = {"smiles": smiles}
        for j, e in enumerate(self.entries):
            data[e.task] = values[:, j]
            if not e.binary:
                width = np.inf if e.halfwidth is None else float(e.halfwidth)
                data[f"{e.task}_lo"] = values[:, j] - width
                data[f"{e.task}_hi"] = values[:, j] + width
            if self.reference is not None and e.task in self.reference.quantiles:
                where = self.reference.percentile(e.task, values[:, j])
                data[f"{e.task}_percentile"] = np.round(where, 1)
        ok = ~np.isnan(distance)
        data["domain_distance"] = distance
        data["far_from_training"] = np.where(ok, distance > self.threshold, None)
        data["warning"] = flags
        data["error"] = errors
        return pd.DataFrame(data)

    def view(self, graphs, smiles, distance=None, values=None):
        """The network's pass over featurized ``graphs`` (`Predictor.featurize`): fills the
        head's ``values`` and the domain ``distance`` of their rows where given, and returns
        what the boosters read of them (`MoleculeView`; empty without boosters)."""
        import torch

        from .panel_boosters import MoleculeView

        view = MoleculeView(bool(self.boosters and self.boosters.needs_backbone))
        for chunk, batch in self.predictor.batches(graphs):
            rows = [i for i, _ in chunk]
            with torch.no_grad():
                raw, emb = self.loaded.model(batch, return_embeddings=True)
            if values is not None:
                z = raw.float().numpy()[:, self.index]
                # regression columns pass through too; np.where keeps their z. A binary
                # blend keeps its head's logit: `_boosted` averages it with the booster's
                # before the Platt scaling
                prob = platt_probability(z, self.platt_a, self.platt_b)
                values[rows] = np.where(self.binary & ~self.blend, prob,
                                        np.where(self.binary, z, z * self.std + self.mean))
            if distance is not None:
                distance[rows] = nearest_distance(emb.vnode.float().numpy(), self.centroids)
            if self.by_booster:
                view.add(rows, [str(smiles[i]).strip() for i in rows], batch, raw, emb.vnode)
        return view.done()

    def _boosted(self, values: np.ndarray, view) -> None:
        """Put the boosters' predictions of the featurized rows into their columns: a blend's
        the mean of the booster's and the head's value already there (`view` put it; a
        binary column's logits); then binary columns Platt-scaled on S as the head's are
        (their own fit), regression as is."""
        predicted = self.boosters.predict(view)
        for j in self.by_booster:
            p = predicted[self.entries[j].task]
            if self.blend[j]:
                p = 0.5 * (values[view.rows, j] + p)
            if self.binary[j]:
                p = platt_probability(p, self.platt_a[j], self.platt_b[j])
            values[view.rows, j] = p

    def endpoint_position(self, endpoint: str) -> int:
        """Where a shown endpoint stands among ``self.entries``; a PanelError for one this
        panel does not show (hidden: it did not hold up; or unknown)."""
        shown = [e.task for e in self.entries]
        if endpoint in shown:
            return shown.index(endpoint)
        hidden = self.panel.endpoint(endpoint) is not None
        why = ("did not hold up on held-out molecules, so this panel does not show it (--all "
               "shows every endpoint)" if hidden else "is not an endpoint of this panel")
        raise PanelError(f"endpoint {endpoint!r} {why}; the endpoints shown are listed by "
                         "`graphnorm admet --list` (GET /admet/endpoints when served)")
