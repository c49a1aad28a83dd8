"""``graphnorm panel readouts RUN``: a one-table booster for each endpoint the panel
judged, and the endpoints where it replaces the backbone's head (the rule:
experiments/results/pretrain/).

Two measurements (experiments/results/pretrain/) found one gbm per table better than the multi-task head on a third of the judged
endpoints (plasma protein binding, microsomal clearance, ChEMBL potency sets): a 4 x 64 network
shared by 802 tasks cannot hold each table's structure-activity detail. So each judged endpoint
gets the booster a user with that one table would fit, and the panel keeps it where the
selection half S says it is better:

- **features**: Morgan counts (radius 2, 2,048 bits; `graphnorm.chem.tabular` "morgan",
  clipped to 255) and the backbone's fast descriptors (the ``descriptors`` the featurizer
  already computes for the head): both cheap, so the panel keeps its speed;
- **booster**: `--model gbm`'s estimator (`BoostedTarget`, log10 where `target_transforms`
  asks) in a compact `CONFIG`, so that the chosen ones ship inside the wheel; fitted on the
  endpoint's labelled training molecules of the run (none held out), seed 0;
- **choice**: the booster when the 95 % paired bootstrap of (booster - head) on S has its lower
  end above 0 (`bootstrap.paired_interval`); R is scored for the report, never for the choice;
- **a quantity** (a regression "quantity/<name>" column of a ``--targets quantities`` run): one
  booster on all its sources' training labels, each source's moved onto the reference
  source's scale by the head's offset between the two (`quantity_sources`), scored on all
  their held-out labels as the head's column is (each prediction moved back to its source's
  scale), and predicting the column on the reference's scale. A binary quantity's 0/1 labels
  cannot be moved: each source's log-odds offset is the margin its rows start from
  (LightGBM's ``init_score``), which prediction leaves out.

The ``backbone`` variant also reads the network's [VNode] embedding and its raw
outputs, less the endpoint's own, and is set against the panel J made (``current``).

Each endpoint's row lands in ``RUN/readout.jsonl`` (``readout_backbone.jsonl``) as it is
fitted (a rerun skips it), and a chosen booster in ``RUN/readouts/<n>.txt.gz``
(``readouts_backbone/``); `hybrid` then writes the hybrid panel.
"""
from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import numpy as np

from graphnorm.baselines.booster_store import as_text, decode, encode
from graphnorm.panel.boosters import (BACKBONE, MORGAN, SEED, booster_estimator,
                                      logit_of, morgan_counts, readout_features, with_backbone)

ROWS_FILE, BOOSTER_DIR = "readout.jsonl", "readouts"
# what a readout booster reads: "morgan": the molecule's Morgan counts and fast
# descriptors; "backbone": those and the backbone's [VNode] embedding and head
# outputs, less the endpoint's own (fitted to these labels on training molecules); the
# columns and the stored format are the panel's contract (`graphnorm.panel.boosters`)
VARIANT_FILES = {MORGAN: (ROWS_FILE, BOOSTER_DIR),
                 BACKBONE: ("readout_backbone.jsonl", "readouts_backbone")}


# what LightGBM's model string holds for training reports only: prediction reads none of it,
# and TreeSHAP (atom attributions) reads the node counts, which stay. ``tree_sizes`` (byte
# offsets for a parallel parse) no longer match once lines go, so LightGBM parses in order.
_REPORT_ONLY = ("split_gain=", "leaf_weight=", "internal_value=", "internal_weight=",
                "tree_sizes=")


def compact_model_text(text: str, x: np.ndarray) -> str:
    """``text`` without its report-only lines (~35 % fewer bytes stored), when the compact
    booster predicts ``x``, and splits those predictions by TreeSHAP, exactly as the full one;
    else ``text`` unchanged."""
    if not text.startswith("tree"):  # a one-class rate
        return text
    compact = "\n".join(line for line in text.split("\n") if not line.startswith(_REPORT_ONLY))
    full, small = decode(text), decode(compact)
    same = np.array_equal(full.predict(x), small.predict(x)) and np.array_equal(
        full.predict(x[:50], pred_contrib=True), small.predict(x[:50], pred_contrib=True))
    return compact if same else text


def booster_file(out: Path, number: int, variant: str = MORGAN) -> Path:
    return Path(out) / VARIANT_FILES[variant][1] / f"{number:03d}.txt.gz"


def read_rows(out: Path, variant: str = MORGAN) -> list[dict]:
    path = Path(out) / VARIANT_FILES[variant][0]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.is_file() else []


def network_names(panel) -> list[str]:
    """The networks a readout row was fitted against: each member's sha256, short."""
    return [sha[:16] for sha in panel.checkpoints]


def check_rows_networks(out: Path, panel, variant: str = MORGAN) -> list[dict]:
    """Refuse to resume readouts fitted against other networks than the folder's: a run
    trained further in place, or a panel rebuilt on new weights, would otherwise reuse the old
    choices silently. Rows from before the field was written are taken as they are. Returns
    the rows already fitted."""
    from .networks import check_built_for
    from .record import PanelFileError

    out = Path(out)
    check_built_for(panel, out)
    networks, rows = network_names(panel), read_rows(out, variant)
    stale = [r["task"] for r in rows if r.get("networks", networks) != networks]
    if stale:
        rows_file, folder = VARIANT_FILES[variant]
        raise PanelFileError(f"{out / rows_file}: {len(stale)} readouts (first {stale[0]}) were "
                             f"fitted against other networks than {out} holds now: remove it "
                             f"and {out / folder} to fit them again")
    return rows


class CorpusFeatures:
    """Readout features of corpus rows (Morgan counts computed once per molecule needed,
    descriptors from the run's featurized corpus; with ``model``, the backbone's embedding and
    raw outputs of each: from ``held`` (`held_out_predictions`) for the held-out molecules,
    from one forward pass for the others)."""

    def __init__(self, run, rows: np.ndarray, progress: bool = True, model=None,
                 held: dict | None = None):
        from graphnorm.data.build import stage

        self.rows = np.unique(rows)
        position = run.payload_positions(self.rows)
        stage(progress, f"readouts: Morgan counts of {len(self.rows):,} molecules")
        self.morgan = morgan_counts([run.corpus.smiles[r] for r in self.rows])
        self.descriptors = run.descriptors_at(position)
        self.embedding = self.outputs = None
        if model is not None:
            self.outputs, self.embedding = self._network_view(run, model, position, held,
                                                              progress)

    def _network_view(self, run, model, position, held, progress) -> tuple:
        """(raw outputs, embeddings) of ``self.rows``, in their order."""
        from graphnorm.data.build import stage

        from graphnorm.pretrain.evaluate import forward_all

        known = np.isin(self.rows, held["rows"]) if held is not None else \
            np.zeros(len(self.rows), dtype=bool)
        width = None if held is None else (held["raw"].shape[1], held["embeddings"].shape[1])
        parts = []
        if known.any():
            order = np.argsort(held["rows"])
            at = order[np.searchsorted(held["rows"], self.rows[known], sorter=order)]
            parts.append((np.flatnonzero(known), held["raw"][at], held["embeddings"][at]))
        if (~known).any():
            stage(progress, f"readouts: the backbone's view of {(~known).sum():,} molecules")
            z, _, emb, got = forward_all(
                model, run.loader(run.subset(position[~known], "readout")), run.labels_of)
            order = np.argsort(got)  # the loader's order back to sorted corpus rows
            if not np.array_equal(got[order], self.rows[~known]):
                raise RuntimeError("the forward pass returned other molecules than asked")
            parts.append((np.flatnonzero(~known), z[order], emb[order]))
            width = (z.shape[1], emb.shape[1])
        outputs = np.empty((len(self.rows), width[0]), np.float32)
        embedding = np.empty((len(self.rows), width[1]), np.float32)
        for where, z, emb in parts:
            outputs[where], embedding[where] = z, emb
        return outputs, embedding

    def of(self, rows: np.ndarray, own: int | None = None, variant: str | None = None
           ) -> np.ndarray:
        """The features of ``rows`` for a ``variant`` booster (default: the richest these
        features hold) of the endpoint whose output is ``own``."""
        at = np.searchsorted(self.rows, rows)
        if self.embedding is None and variant == BACKBONE:
            raise ValueError("these features were computed without the backbone")
        base = readout_features(self.morgan[at], self.descriptors[at])
        if self.embedding is None or variant == MORGAN:
            return base
        return with_backbone(base, self.embedding[at], self.outputs[at], own)


def fit_readouts(run, out: Path, threads: int = 1, progress: bool = True, variant: str = MORGAN,
                 current: dict | None = None, held: dict | None = None) -> list[dict]:
    """Fit, score and choose the ``variant`` readout of each judged endpoint of
    ``out/panel.json`` not yet in its rows file; returns every row. Each is set against the
    head, or against ``current[task]`` (held-out predictions of the panel's predictor: logits
    or values, in `held_out_predictions`' order) where given; ``"against"`` says which.
    ``held``: the run's `held_out_predictions` of its best.ckpt, when the caller has them."""
    from graphnorm.data.build import stage
    from graphnorm.tasks import REGRESSION, target_transforms

    from graphnorm.panel import Panel
    from graphnorm.quantities import PREFIX

    from .build import held_out_predictions
    from .networks import load_networks

    out = Path(out)
    if not getattr(run.spec, "descriptors", None):
        raise ValueError(f"{out}: readouts read the backbone's descriptors, and this run has "
                         "none (a --descriptors run's panel can take them)")
    rows_file, folder = VARIANT_FILES[variant]
    # every judged source column, then (numbered after them, so earlier rows keep their
    # files) each judged quantity: its sources' labels pooled on one scale
    panel = Panel.read(out)
    endpoints, networks = panel.endpoints, network_names(panel)
    fitted = check_rows_networks(out, panel, variant)
    # a source folded into the quantity column shown in its place gets none: hidden, it
    # would spend the boosters' bytes and CPU on a column nobody reads
    shown_quantities = {e.task[len(PREFIX):] for e in endpoints if e.is_quantity and e.shown}
    judged = [e for e in endpoints if e.judged and not e.is_quantity
              and e.quantity not in shown_quantities] + [
        e for e in endpoints if e.judged and e.is_quantity and variant == MORGAN]
    done = {r["task"] for r in fitted}
    todo = [(n, e) for n, e in enumerate(judged) if e.task not in done]
    stage(progress, f"readouts ({variant}): {len(judged)} judged endpoints, {len(done)} done, "
                    f"{len(todo)} to go")
    if todo:
        model = load_networks(out).model
        held = held if held is not None else held_out_predictions(run, model)
        if current and any(len(p) != len(held["rows"]) for p in current.values()):
            raise ValueError("current predictions must cover every held-out molecule, in "
                             "held_out_predictions' order")
        corpus, index = run.corpus, {n: t for t, n in enumerate(run.corpus.task_names)}
        sources = {e.task: endpoint_sources(run, held, e, index) for _, e in todo}
        mol_of, labelled = training_labels(run, sources)
        features = CorpusFeatures(run, np.concatenate([mol_of[m] for parts in labelled.values()
                                                       for m, _ in parts] + [held["rows"]]), progress,
                                  model if variant == BACKBONE else None, held)
        (out / folder).mkdir(exist_ok=True)
        for k, (number, e) in enumerate(todo, 1):
            t = index[e.output] if e.is_quantity else index[e.task]  # the scale predicted
            binary = bool(run.scaling.binary[t])
            start = time.process_time()
            rows = mol_of[np.concatenate([m for m, _ in labelled[e.task]])]
            y, margin = pooled_labels(corpus, labelled[e.task], binary)
            transform = None if binary else (target_transforms(REGRESSION, y[:, None])
                                             or [None])[0]
            x_train = features.of(rows, t, variant)
            est = booster_estimator(binary, transform, threads).fit(x_train, y,
                                                                    init_score=margin)

            def theirs(task, have, d, est=est, t=t):
                p = est.predict(features.of(held["rows"][have], t, variant))
                return (logit_of(p) if binary else p) + d

            against = "current" if current and e.task in current else "head"
            base = ((lambda task, have, d: current[e.task][have]) if against == "current"
                    else (lambda task, have, d: held["pred"][have, task]))
            y_h, booster_h, select = pooled_held(held, sources[e.task], theirs)
            _, base_h, _ = pooled_held(held, sources[e.task], base)
            row = {"task": e.task, "number": number, "kind": e.kind, "transform": transform,
                   "variant": variant, "against": against, "n_train": int(len(rows)),
                   "networks": networks}
            if e.is_quantity:  # the scale it predicts, and each source's offset to it
                row["output"] = e.output
                row["sources"] = [[run.corpus.task_names[u], d] for u, d in sources[e.task]]
            for half, part in (("select", select), ("report", ~select)):
                row[half] = paired_scores(binary, y_h[part], booster_h[part], base_h[part])
            row["chosen"] = row["select"]["lo"] is not None and row["select"]["lo"] > 0
            if row["chosen"]:
                text = stored_text(est, x_train)
                path = booster_file(out, number, variant)
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(gzip.compress(text.encode(), mtime=0))
                tmp.replace(path)
                row["bytes"] = path.stat().st_size
            row["cpu_s"] = round(time.process_time() - start, 1)
            with open(out / rows_file, "a") as f:
                f.write(json.dumps(row) + "\n")
            s_half = row["select"]
            stage(progress, f"readouts ({variant}): {k}/{len(todo)} {e.task}: S {against} "
                            f"{_fmt(s_half['head'])} booster {_fmt(s_half['booster'])}"
                            f"{' (chosen)' if row['chosen'] else ''}")
    return read_rows(out, variant)


def training_labels(run, sources: dict) -> tuple[np.ndarray, dict]:
    """(``mol_of``, ``labelled``): each corpus label's molecule, and for each endpoint of
    ``sources`` (endpoint -> [(task index, offset)]) each source's training-label positions
    with its offset -- what readouts, the refit and versus-gbm fit a booster on. Positions,
    not masks: 149 masks over 1.9 M labels would hold ~280 MB."""
    corpus = run.corpus
    mol_of = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    is_train = np.zeros(len(corpus), dtype=bool)
    is_train[run.corpus_rows(run.train_positions)] = True
    on_train = is_train[mol_of]  # once, not per source
    return mol_of, {task: [(np.flatnonzero((corpus.task == t) & on_train), d) for t, d in s]
                    for task, s in sources.items()}


def endpoint_sources(run, held: dict, e, index: dict) -> list[tuple[int, float]]:
    """(task index, offset) of what ``e``'s booster learns from: a quantity's sources
    (`quantity_sources`), or the endpoint's own column at offset 0."""
    return quantity_sources(run, held, e) if e.is_quantity else [(index[e.task], 0.0)]


def quantity_sources(run, held: dict, e) -> list[tuple[int, float]]:
    """(task index, offset) of each trained source of the quantity endpoint ``e``, in the
    order `build.quantity_endpoints` pools them. The offset is the head's difference between
    that source's output and the reference's (``e.output``): sources share the quantity's
    weights and scaling, so it is one number for every molecule -- the assay's offset, which
    moves the source's labels onto the reference's scale (and the booster's predictions
    back onto the source's, to score them against its labels)."""
    from graphnorm.quantities import PREFIX

    quantity, ref = e.task[len(PREFIX):], run.corpus.task_names.index(e.output)
    return [(t, float(np.median(held["pred"][:, t] - held["pred"][:, ref])))
            for t, q in enumerate(run.quantity_of)
            if q == quantity and bool(run.scaling.trained[t])]


def pooled_labels(corpus, labelled: list, binary: bool) -> tuple:
    """(labels, margins) of a booster on sources' training labels (``labelled``: each
    source's (label positions, offset)) on the reference's scale: a regression source's
    labels moved by its offset (margins None); a binary source's 0/1 labels as they are, its
    log-odds offset the margin its rows start from (LightGBM's ``init_score``; None when
    every offset is 0)."""
    if not binary:
        return np.concatenate([corpus.value[m] - d for m, d in labelled]), None
    margin = np.concatenate([np.full(len(m), d) for m, d in labelled])
    return np.concatenate([corpus.value[m] for m, _ in labelled]), (margin if margin.any() else None)


def pooled_held(held: dict, sources: list[tuple[int, float]], values) -> tuple:
    """(labels, predictions, S mask) of the labelled held-out molecules of ``sources``,
    source after source (`build.quantity_endpoints`' order); ``values(task, have, offset)``
    predicts source ``task``'s labelled held-out molecules (``have``, a mask)."""
    parts = []
    for t, d in sources:
        have = ~np.isnan(held["y"][:, t])
        parts.append((held["y"][have, t], values(t, have, d), held["select"][have]))
    return tuple(np.concatenate(p) for p in zip(*parts))


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def paired_scores(binary: bool, y: np.ndarray, booster: np.ndarray, head: np.ndarray) -> dict:
    """Both scores on one half and the 95 % paired interval of booster - head; None where
    the metric is undefined there (fewer than two molecules; one class, or no variance)."""
    from graphnorm.stats.bootstrap import metric_of, paired_interval, score

    out = {"n": int(len(y)), "head": None, "booster": None, "lo": None, "hi": None}
    defined = len(y) > 1 and (0 < y.sum() < len(y) if binary else np.var(y) > 0)
    if defined:
        out.update(head=score(metric_of(binary), y, head),
                   booster=score(metric_of(binary), y, booster))
        out["lo"], out["hi"] = paired_interval(metric_of(binary), y, booster, head,
                                               np.random.default_rng(SEED))
    return out


def stored_text(estimator, x: np.ndarray) -> str:
    """A fitted readout's stored form as text (`graphnorm.baselines.booster_store`), compacted
    where that predicts ``x`` (its first 2,000 training rows) the same (`compact_model_text`)."""
    # a Log10Target's model is its inner booster's (in log10 units)
    return compact_model_text(as_text(encode(estimator.model)), x[:2000])
