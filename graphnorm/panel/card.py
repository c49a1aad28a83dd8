"""``graphnorm panel card RUN``: the model card of a pre-trained run, from
what the run recorded -- its spec (``pretrain.json``), data (``data.json``), cost curve
(``log.jsonl``), panel (``panel.json``) -- and each corpus's ``meta.json`` (source, commit,
licence as stated there). Written, never hand-edited: the command regenerates it (Mitchell et
al. 2019, *Model Cards for Model Reporting*, FAT* '19, for what a card holds).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from graphnorm.tasks import REGRESSION

from graphnorm.panel import Panel

from .rebuild import rebuild_lines

CARD_FILE = "MODEL_CARD.md"


# the TDC ADMET tables a product build reads as one more corpus (`--with-tdc-tables`): where
# they come from and their terms, as ../shared/datasets/README.md states them
TDC_META = {"source_repo": "TDC ADMET group, Harvard Dataverse DOI 10.7910/DVN/21LKWG",
            "license": "CC BY 4.0 (as TDC distributes them; "
            "original sources cited per task on the TDC pages)", "tasks": 22}


def _corpus_meta(raw_dir, corpora) -> list[dict]:
    from graphnorm.pretrain.corpus import TDC_CORPUS

    root = Path(raw_dir or os.environ.get("GRAPHNORM_RAW_DIR", ".")) / "admet_corpus"
    out, unknown = [], []
    for name in corpora:
        path = root / name / "meta.json"
        meta = json.loads(path.read_text()) if path.is_file() else \
            dict(TDC_META) if name == TDC_CORPUS else {}
        unknown += [name] if not meta else []
        out.append({"corpus": name, **meta})
    if unknown:  # the card still gets written, but a licence must not go missing unnoticed
        print(f"graphnorm panel card: warning: no meta.json under {root} for {len(unknown)} "
              f"corpora ({', '.join(unknown[:3])}, ...): their source and licence read "
              "'unknown' (--raw-dir names the folder holding admet_corpus/)", file=sys.stderr)
    return out


def _use_lines(spec: dict) -> list[str]:
    """Whether the network may start a user's training: never once it learned TDC molecules."""
    if spec.get("tdc_tables"):  # what `train --init-from` refuses (graphnorm.train.init_from)
        return ["- Not a starting point for `train` and never a TDC benchmark entry: it learned "
                "the TDC ADMET tables, their test sets too, as ADMET-AI did (`train --init-from` "
                "and the TDC suite refuse it; they start from the benchmark backbone, "
                "`--init-from admet`)."]
    return ["- A starting point for fine-tuning on a measured table (`train --init-from`), and "
            "tree-model columns (`--tree-features maplight+admet+gnn`)."]


def _data_line(spec: dict, sizes: dict) -> str:
    train = f"{sizes.get('train', 0):,} training molecules from the corpora below"
    terms = " Weights trained on these data carry their terms."
    if spec.get("tdc_tables"):
        return (f"{train}, the TDC ADMET tables among them (train_val and test: this model is "
                "for `graphnorm admet`, never scored as a TDC entry)." + terms)
    if not spec.get("exclude_tdc", True):
        return (f"{train}; molecules of the TDC ADMET tables kept (`--keep-tdc`): it may have "
                "seen TDC train_val molecules, though the corpus ships without any benchmark "
                "test molecule." + terms)
    return (f"{train}; {sizes.get('excluded_tdc', 0):,} molecules left out because they are "
            "in a TDC ADMET table (train_val or test), matched by a loose key (largest "
            "fragment, no stereochemistry); the corpus itself ships without any benchmark test "
            "molecule." + terms)


def _fmt(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _device_lines(log: list[dict]) -> list[str]:
    """A line on the steps trained on another device than the CPU (a resumed run may move)."""
    moved = [r for r in log if r.get("device", "cpu") != "cpu"]
    if not moved:
        return []
    return [f"- The evaluations from step {moved[0]['step']:,} on come from a run continued on "
            f"`{moved[0]['device']}` (a GPU), fed by loader processes whose CPU time is not in "
            "the CPU-hours above."]


def _gbm_lines(shown: list, gbm: dict) -> list[str]:
    """What one gbm per endpoint (`versus_gbm`) said about the shown endpoints."""
    judged = [e for e in shown if e.task in gbm]
    if not judged:
        return []
    verdicts = [gbm[e.task]["verdict"] for e in judged]
    return [f"- Against one gbm per endpoint (MapLight features, fitted on that endpoint's "
            f"training molecules alone, scored on the same held-out half): of the "
            f"{len(judged)} shown endpoints the network's head alone predicts, "
            f"the head is better on "
            f"{verdicts.count('backbone')}, gbm on {verdicts.count('single_table')}, tied on "
            f"{verdicts.count('tied')} (95 % paired bootstrap). Where gbm is better, a model "
            "fitted on your own measured table of that endpoint will likely beat the panel "
            "(the `gbm` column below)."]


def _gbm_cell(row: dict | None, boosted: bool) -> str:
    """The `gbm (one table)` cell of an endpoint: its score, marked where it is better than
    the head (not marked where something else predicts it: the verdict was about the head)."""
    if row is None:
        return " |"
    better = row["verdict"] == "single_table" and not boosted
    return f" {_fmt(row['single_table'])}{' (better)' if better else ''} |"


def _readout_lines(shown: list) -> list[str]:
    """What a hybrid panel (`graphnorm panel readouts`) predicts with boosters."""
    boosted = [e for e in shown if e.by_booster]
    if not boosted:
        return []
    network = sum(e.reads_network for e in boosted)
    also = (f" {network} of these boosters also read the network's [VNode] embedding and its "
            "outputs for the other tasks (`booster+network`), where that beat the panel's "
            "predictor on the choosing half." if network else "")
    return [f"- {len(boosted)} of the {len(shown)} endpoints shown are predicted by a one-table "
            "booster (LightGBM on Morgan counts and the head's descriptors, fitted on that "
            "endpoint's training molecules) instead of the network's head: there the booster "
            "beat the head on the choosing half (95 % paired bootstrap)." + also
            + " Their atom attributions (`--explain`) are TreeSHAP contributions of their "
            "Morgan substructures, shared among the substructures' atoms."]


def _quantity_lines(panel) -> list[str]:
    """What a quantity run's panel (`pretrain --targets quantities`) shows for a quantity."""
    quantities = [e for e in panel.endpoints if e.is_quantity]
    if not quantities:
        return []
    folded = sum(1 for e in panel.endpoints if e.quantity and not e.shown)
    return [f"- {sum(e.shown for e in quantities)} of {len(quantities)} quantities measured by "
            "several public sources are one column each (`quantity/<name>`, in its unit): "
            "scored on the held-out labels of all their sources, each against its own "
            "source's learned offset, and shown on the scale of the source with the most "
            f"training labels; {folded} source columns are folded into them."]


def _related_lines(shown: list) -> list[str]:
    """The columns read through another species' column (`graphnorm panel related`)."""
    read = [e for e in shown if e.by_related]
    return [f"- `{e.task}` is read through `{e.via}` (the same measurement in another "
            f"species): {e.affine[0]:.3f} + {e.affine[1]:.3f} x its value, fitted on this "
            "column's training labels; it beat the column's own predictor on the choosing "
            "half." for e in read]


def _blend_lines(shown: list) -> list[str]:
    """The columns the head and a booster predict half each (`graphnorm panel blend`)."""
    quantities = [e.task for e in shown if e.by_blend and e.is_quantity]
    others = [e.task for e in shown if e.by_blend and not e.is_quantity]
    lines = []
    if quantities:
        lines.append(
            f"- {len(quantities)} quantity columns are the mean of the head and a one-table "
            f"booster (`head + booster`): {', '.join(f'`{t}`' for t in quantities)}. The mean "
            "was chosen on public sources no part of the panel had read "
            "(experiments/results/zero_shot/); the choosing half only checked that it is not "
            "worse than the column's predictor.")
    if others:
        lines.append(
            f"- {len(others)} more columns that a one-table booster predicted are the mean of "
            "the head and that booster (binary ones on the logit scale, then calibrated), "
            "where the mean scored at least as high as the booster on the choosing half.")
    return lines


def _predictor(e) -> str:
    """`Endpoint.predictor`, a booster that also reads the network marked so."""
    return e.predictor + ("+network" if e.reads_network else "")


def _reference_lines(ref) -> list[str]:
    """A line on ``<endpoint>_percentile`` when the run has a reference (`panel reference`)."""
    if ref is None:
        return []
    return [f"- `<endpoint>_percentile`: where a value stands (0-100) among this panel's "
            f"predictions for {ref.molecules:,} {ref.name} (`graphnorm panel reference`), as "
            "ADMET-AI gives DrugBank percentiles: context for a value, not a measurement of "
            "those drugs."]


def _member_lines(panel) -> list[str]:
    """An ensemble's line (`graphnorm.panel.networks`): how many networks, and which."""
    shas = panel.checkpoints
    if len(shas) < 2:
        return []
    return [f"- The mean of {len(shas)} such networks, one recipe trained with different seeds "
            "on the same held-out scaffolds (`graphnorm panel ensemble`); its training line "
            "below is the first's. Members' sha256: "
            + ", ".join(f"`{s[:16]}…`" for s in shas) + "."]


def _training_lines(spec: dict, log: list, best: dict, panel) -> list[str]:
    """How the checkpoint was trained: the lowest held-out loss's, or a refit's last."""
    last = log[-1] if log else {}
    if panel.refit_of:
        which = (f"- Trained on every row (no scaffold held out; a refit of the held-out build "
                 f"`{panel.refit_of[:16]}…`): the last checkpoint, step {last.get('step', 0):,}")
        row, scores = last, "."
    else:
        which = (f"- The checkpoint of the lowest held-out loss: step {best.get('step', 0):,} of "
                 f"{last.get('step', 0):,} trained")
        row = best
        scores = (f"; held-out scaffolds: loss {_fmt(best.get('val_loss'))}, mean ROC-AUC "
                  f"{_fmt(best.get('val_auroc'))}, mean R² {_fmt(best.get('val_r2'))}.")
    return [
        f"{which}, batches of {spec['batch_size']} molecules ({row.get('seen', 0):,} molecules "
        f"seen), {row.get('cpu_s', 0) / 3600:.2f} CPU-hours as logged (a shared 2-core "
        f"machine), seed {spec['seed']}.",
        *_device_lines(log),
        f"- Objective: masked multi-task BCE (binary) and standardized L1 (regression), each "
        f"molecule weighing one (`{spec['weighting']}` weighting){scores}"]


def model_card(run: Path, raw_dir=None, zero_shot=()) -> str:
    """The card's Markdown (raises FileNotFoundError naming what the run lacks); with
    ``zero_shot``, `panel versus` scorings of this panel (`_zero_shot_lines`)."""
    from graphnorm.pretrain.folder import best_evaluation, read_log

    from .reference import read_reference
    from .versus_gbm import read_rows

    run = Path(run)
    needed = {name: run / name for name in ("pretrain.json", "data.json", "log.jsonl", "panel.json")}
    missing = [str(p) for p in needed.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"a model card reads the run's records: missing {', '.join(missing)}"
                                " (train the run, then `graphnorm panel build RUN`)")
    spec = json.loads(needed["pretrain.json"].read_text())
    data = json.loads(needed["data.json"].read_text())
    log = read_log(run)
    panel = Panel.read(needed["panel.json"])
    best = best_evaluation(log)
    corpora = sorted(data.get("sources", {}))
    shown = panel.shown_endpoints()
    gbm = {r["task"]: r for r in read_rows(run)}  # empty: `panel versus-gbm` was not run
    hybrid = panel.readouts_sha256 is not None  # some endpoints by boosters (`panel readouts`)
    reference = read_reference(run)  # percentiles beside the panel (`panel reference`), or None
    lines = [
        "# Model card: graphnorm's pre-trained ADMET Graphormer", "",
        "## Model", "",
        f"- Graphormer with its [VNode], {spec['num_layers']} blocks x {spec['hidden']} (FFN "
        f"{spec['ffn_hidden']}), norm `{spec['norm']}`, {data.get('parameters', 0):,} parameters; "
        f"one head output per corpus task ({data.get('tasks')}).",
        *_member_lines(panel),
        *_training_lines(spec, log, best, panel),
        f"- Checkpoint sha256 `{panel.checkpoint_sha256[:16]}…`; corpus sha256 "
        f"`{data.get('corpus_sha256', '')[:16]}…`.", "",
        "## Intended use", "",
        "- Screening-stage estimates of ADMET endpoints for drug-like small molecules (up to 100 "
        "heavy atoms), beside measurement, never instead of it.",
        *_use_lines(spec),
        "- For breadth and speed. For one endpoint whose measured table you have, a model "
        "fitted on that table (`train --data`, `--model gbm`) is usually more accurate: on "
        "held-out scaffolds one gbm per table beat the shipped backbone on most ADME endpoints "
        "(docs/pretraining.md).",
        *_gbm_lines([e for e in shown if e.by_head], gbm),
        *_readout_lines(shown),
        *_related_lines(shown),
        *_blend_lines(shown),
        *_quantity_lines(panel),
        *_reference_lines(reference),
        "- Not for: regulatory decisions, molecules far from the training data "
        "(`far_from_training`), peptides, inorganics, or endpoints not listed below.", "",
        *_zero_shot_lines(run, zero_shot),
        "## Data", "",
        _data_line(spec, data.get("sizes", {})), "",
        "| corpus | source @ commit | licence as stated there | molecules | tasks |",
        "|---|---|---|---|---|"]
    for meta in _corpus_meta(raw_dir, corpora):
        at = f" @ {str(meta['commit'])[:8]}" if meta.get("commit") else ""
        lines.append(f"| {meta['corpus']} | {meta.get('source_repo', '?')}{at} | "
                     f"{meta.get('license', 'unknown')} | "
                     f"{meta.get('rows', '')} | {meta.get('tasks', '')} |")
    th = panel.thresholds
    lines += [
        "", "## Endpoints and their held-out scores", "",
        *([f"Measured by the held-out build (checkpoint `{panel.refit_of[:16]}…`) on its "
           "held-out molecules, before this model was trained again on every row with the "
           "same recipe (`graphnorm panel refit`): the scores, intervals and calibration "
           "describe that build; the boosters and the far-from-training yardstick were fitted "
           "again.", ""] if panel.refit_of else []),
        f"{len(shown)} of {len(panel.endpoints)} trained endpoints held up"
        f" ({sum(e.judged for e in panel.endpoints)} had enough held-out labels to be judged)"
        " on "
        f"{panel.held_out_molecules:,} held-out molecules (whole scaffolds never trained on): "
        f"chosen on one half (ROC-AUC >= {th['auroc']}, R² >= {th['r2']}, with enough labels), "
        "scored on the other, which the table reports. Intervals: 90 % split-conformal "
        "half-widths on that half, in the endpoint's units. Binary probabilities are "
        "Platt-scaled on the choosing half; their expected calibration error (ECE) on the "
        "reporting half is given before -> after.", "",
        "| endpoint | kind | units | metric | score | n | 90 % half-width / ECE |"
        + (" predictor |" if hybrid else "") + (" gbm (one table) |" if gbm else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if hybrid else "") + ("---|" if gbm else "")]
    for e in sorted(shown, key=lambda e: e.task):
        extra = (_fmt(e.halfwidth) if e.kind == REGRESSION.stored else
                 f"{_fmt(e.ece_uncalibrated)} -> {_fmt(e.ece)}" if e.platt else _fmt(e.ece))
        versus = _gbm_cell(gbm.get(e.task), not e.by_head) if gbm else ""
        predictor = f" {_predictor(e)} |" if hybrid else ""
        lines.append(f"| {e.task} | {e.kind} | {e.units or ''} | {e.metric} | "
                     f"{_fmt(e.score)} | {e.n} | {extra} |{predictor}{versus}")
    lines += ["", *rebuild_lines(run, spec, log, best, panel, reference)]
    return "\n".join(lines)


def write_model_card(run: Path, raw_dir=None, zero_shot=()) -> Path:
    path = Path(run) / CARD_FILE
    path.write_text(model_card(run, raw_dir, zero_shot))
    return path


def _zero_shot_lines(run: Path, scorings) -> list[str]:
    """The card's section on a new program's molecules: one table per
    `panel versus` scoring (its versus.json) of this very panel; another panel's is refused."""
    from .record import panel_file_sha256

    if not scorings:
        return []
    mine = panel_file_sha256(run)
    lines = ["## Ranking a new program's molecules", "",
             "Spearman ρ of a column against the measured values on molecules of a program "
             "none of the training sources comes from, beside the peer's column on the same "
             "molecules; the verdict is a 95 % paired bootstrap of the difference (`graphnorm "
             "panel versus`). The held-out scaffolds below come from the training sources; "
             "these molecules do not, so they say more about a chemist's own new compounds."]
    for path in map(Path, scorings):
        try:
            done = json.loads(path.read_text())
            rows = [{k: r[k] for k in ("quantity", "molecules", "ours_column", "ours",
                                       "theirs_column", "theirs", "d_low", "d_high", "verdict")}
                    for r in done["rows"]]
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path}: not a versus.json of `graphnorm panel versus` "
                             f"({type(err).__name__}: {err})") from err
        if done.get("panel_sha256") != mine:
            raise ValueError(f"{path} scored another panel than {run / 'panel.json'} (or was "
                             "written before scorings named their panel): score this one with "
                             f"`graphnorm panel versus --model {run}`")
        measured = ", ".join(f"`{Path(m).parent.name}/{Path(m).name}`" for m in done["measured"])
        lines += ["", f"{measured} against {done['peer']}, {done['date_utc'][:10]}:", "",
                  "| measured (molecules) | column | ρ | peer's column | peer's ρ | "
                  "95 % (ρ − peer's) | this panel is |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['quantity']} ({r['molecules']}) | {r['ours_column']} | {_fmt(r['ours'])}"
                  f" | {r['theirs_column']} | {_fmt(r['theirs'])} | [{r['d_low']:+.3f}, "
                  f"{r['d_high']:+.3f}] | {r['verdict']} |" for r in rows]
    return lines + [""]
