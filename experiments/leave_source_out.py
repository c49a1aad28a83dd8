"""Issue 68's leave-source-out yardstick: for a quantity several sources measure, build the
panel without one source (``graphnorm pretrain --leave-out SOURCE``) and score that source's
molecules zero-shot against ADMET-AI (``graphnorm panel versus``), source by source.
The protocol is fixed in experiments/results/zero_shot/RULE.md ("Leave-source-out").

    python experiments/leave_source_out.py plan                       # the sources it would score
    python experiments/leave_source_out.py table --source S --out DIR  # DIR/measured.csv + commands
    python experiments/leave_source_out.py joint --out DIR             # all scored sources, one build
    python experiments/leave_source_out.py one --source S --lso DIR --out DIR1 --max-time 55m
    python experiments/leave_source_out.py finetune --lso DIR          # one table per quantity + commands
    python experiments/leave_source_out.py score-finetuned --lso DIR [--ledger CSV]
    python experiments/leave_source_out.py score-blend --lso DIR [--wide] [--ledger CSV]

A source's zero-shot molecules are those it measured that no other source of the quantity
measured (else the build learned their value under another name); its values are read in
the quantity's unit (`graphnorm.quantities`). Reads $GRAPHNORM_RAW_DIR (admet_corpus/ and
the TDC ADMET group).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

# ADMET-AI 2.0.1's column for each quantity the rule scores: TDC endpoints that run the same
# way as the quantity (fixed with the rule, before any score)
ADMET_AI = {"logd74": "Lipophilicity_AstraZeneca", "solubility": "Solubility_AqSolDB",
            "clint_microsomal_human": "Clearance_Microsome_AZ", "papp_caco2": "Caco2_Wang"}
MIN_MOLECULES = 200  # zero-shot molecules a source needs to be scored


def quantity_corpus():
    """(the corpus with the TDC tables, every mapped endpoint in its quantity's unit; the
    quantity of each task or None)."""
    from graphnorm.data.tdc import admet_group_dir
    from graphnorm.pretrain.corpus import load_corpus
    from graphnorm.quantities import to_quantity_units

    converted = to_quantity_units(load_corpus(None, None, admet_group_dir(None, None)))
    return converted.corpus, converted.quantity_of


def zero_shot(corpus, quantity_of, source: str) -> pd.DataFrame:
    """smiles and value (the quantity's unit) of the molecules ``source`` measured and no
    other source of its quantity did."""
    t = corpus.task_names.index(source)
    q = quantity_of[t]
    if q is None:
        raise ValueError(f"{source} measures no quantity of the map")
    molecule = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    siblings = [u for u, name in enumerate(quantity_of) if name == q and u != t]
    elsewhere = set(molecule[np.isin(corpus.task, siblings)].tolist())
    mine = np.flatnonzero(corpus.task == t)
    kept = [k for k in mine if molecule[k] not in elsewhere]
    return pd.DataFrame({"smiles": [corpus.smiles[molecule[k]] for k in kept],
                         q: corpus.value[kept].astype(float)})


def plan(corpus, quantity_of) -> pd.DataFrame:
    """Per source of a scored quantity with two or more sources: its labels, its zero-shot
    molecules, and whether the rule scores it (a corpus source, not TDC: ADMET-AI learned
    from the TDC tables; at least `MIN_MOLECULES`)."""
    rows = []
    for q in ADMET_AI:
        sources = [n for n, name in zip(corpus.task_names, quantity_of) if name == q]
        for s in sources if len(sources) > 1 else []:
            n = len(zero_shot(corpus, quantity_of, s))
            rows.append({"quantity": q, "source": s,
                         "labels": int((corpus.task == corpus.task_names.index(s)).sum()),
                         "zero_shot": n,
                         "scored": not s.startswith("tdc/") and n >= MIN_MOLECULES})
    return pd.DataFrame(rows)


def _safe(name: str) -> str:
    return name.replace("/", "__")


def joint(corpus, quantity_of, out: Path) -> str:
    """The amendment's form (RULE.md): every scored source's zero-shot molecules in
    OUT/<source>/measured.csv, and the commands of the one build that leaves them all out."""
    scored = plan(corpus, quantity_of).query("scored")
    run = out / "run"
    lines = [" ".join(build_command(list(scored["source"]), run, "55m")) + "   # resumable",
             f"graphnorm panel build {run}"]
    for _, r in scored.iterrows():
        folder = out / _safe(r["source"])
        folder.mkdir(parents=True, exist_ok=True)
        zero_shot(corpus, quantity_of, r["source"]).to_csv(folder / "measured.csv", index=False)
        q = r["quantity"]
        lines.append(f"graphnorm panel versus {folder / 'measured.csv'} --model {run} --all "
                     f"--match {q}=quantity/{q}:{ADMET_AI[q]} --admet-ai-python PY "
                     f"--out {folder}/versus --ledger experiments/results/zero_shot/ledger.csv")
    return "\n".join(lines)


STEPS = 22000  # every leave-source-out build's length (RULE.md)


def build_command(sources: list, run: Path, max_time: str) -> list:
    """The product recipe from scratch without ``sources`` (RULE.md), one call of at most
    ``max_time``; the same command again goes on where the last call stopped."""
    return ["graphnorm", "pretrain", "--out", str(run), "--leave-out", ",".join(sources),
            "--keep-tdc", "--with-tdc-tables", "--targets", "quantities", "--descriptors",
            "fast", "--train-every-task", "--val-percent", "15", "--max-steps", str(STEPS),
            "--eval-every", "1000", "--max-time", max_time, "--threads", "2", "--workers", "2"]


def steps_done(run: Path) -> int:
    import json

    record = run / "metrics.json"
    return int(json.loads(record.read_text()).get("steps") or 0) if record.is_file() else 0


def one(source: str, lso: Path, out: Path, max_time: str, ledger) -> str:
    """The yardstick's full form for ``source`` (RULE.md): the build without it alone, one
    call of ``max_time`` (call again until it has `STEPS`), then its head-only panel scored on
    the source's zero-shot molecules (``lso``/<source>/measured.csv, from `joint`) against
    ADMET-AI's predictions cached there; returns what it did."""
    import subprocess

    q = quantity_of_source(source)
    joint_folder, run = lso / _safe(source), out / _safe(source) / "run"
    if steps_done(run) < STEPS:
        run.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(build_command([source], run, max_time), check=False)
        if steps_done(run) < STEPS:
            return f"{source}: {steps_done(run):,} of {STEPS:,} steps; call again to go on"
    if not (run / "panel.json").is_file():
        subprocess.run(["graphnorm", "panel", "build", str(run), "--workers", "2"], check=True)
    versus = ["graphnorm", "panel", "versus", str(joint_folder / "measured.csv"), "--model",
              str(run), "--all", "--match", f"{q}=quantity/{q}:{ADMET_AI[q]}",
              "--peer-predictions", str(joint_folder / "versus" / "peer.csv"),
              "--out", str(run.parent / "versus")] + (["--ledger", str(ledger)] if ledger else [])
    subprocess.run(versus, check=True)
    return f"{source}: scored -> {run.parent / 'versus' / 'versus.md'}"


def quantity_of_source(source: str) -> str:
    """The quantity the map says ``source`` measures (no corpus read for a lookup)."""
    from graphnorm.quantities import SOURCES

    found = [s.quantity for s in SOURCES if s.endpoint == source]
    if not found:
        raise ValueError(f"{source} measures no quantity of the map")
    return found[0]


def canonical(smiles: str):
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol) if mol is not None else None


def finetune_tables(corpus, quantity_of, lso: Path) -> str:
    """RULE.md "a quantity fine-tuned on its own" (session 57): per scored quantity, every
    label of it from the sources the joint build read (LSO/run/pretrain.json's --leave-out),
    one per molecule however it is spelled (the mean over sources), without any molecule of
    that quantity's scored zero-shot sets; LSO/finetune/<quantity>.csv and the commands."""
    import json

    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")
    left_out = json.loads((lso / "run" / "pretrain.json").read_text())["leave_out"]
    molecule = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    out, lines = lso / "finetune", []
    out.mkdir(parents=True, exist_ok=True)
    for q in ADMET_AI:
        tasks = [t for t, name in enumerate(quantity_of)
                 if name == q and corpus.task_names[t] not in left_out]
        at = np.flatnonzero(np.isin(corpus.task, tasks) & np.isfinite(corpus.value))
        frame = pd.DataFrame({"smiles": [corpus.smiles[molecule[k]] for k in at],
                              "y": corpus.value[at].astype(float)})
        frame["key"] = [canonical(s) for s in frame["smiles"]]
        frame = frame.dropna(subset=["key"]).groupby("key", sort=False, as_index=False).agg(
            smiles=("smiles", "first"), y=("y", "mean"))
        scored = set()
        for source in (s for s in left_out if quantity_of[corpus.task_names.index(s)] == q):
            measured = pd.read_csv(lso / _safe(source) / "measured.csv")
            scored |= {canonical(s) for s in measured["smiles"]}
        shared = frame["key"].isin(scored - {None})
        frame.loc[~shared, ["smiles", "y"]].rename(columns={"y": q}).to_csv(out / f"{q}.csv",
                                                                            index=False)
        (out / f"{q}.yaml").write_text(f"panel_column: {q}\n")  # may start from the build
        print(f"{q}: {int((~shared).sum())} molecules ({int(shared.sum())} of the scored "
              "zero-shot sets spelled otherwise left out)")
        lines.append(f"graphnorm train --config {out}/{q}.yaml --data {out}/{q}.csv "
                     f"--target-columns {q} --recipe admet --init-from {lso}/run/best.ckpt "
                     f"--tree-features maplight --seed 0 --threads 2 --out {out}/runs/{q}")
    return "\n".join(lines)


def _cells(arm: str, them: dict, mine: dict, base: str = "H") -> dict:
    """An arm's cells of a source's summary row: its rho, against the arm ``base`` (the
    head-only column H unless said; ``mine``) and against ADMET-AI (``them``), both
    `panel.versus` rows."""
    return {"molecules": them["molecules"], base: mine["theirs"], arm: them["ours"],
            f"{arm} vs {base}": f"{mine['verdict']} [{mine['d_low']:+.3f}, "
                                f"{mine['d_high']:+.3f}]",
            "ADMET-AI": them["theirs"], f"{arm} vs ADMET-AI": them["verdict"]}


def _ledger_row(stamp: str, panel: str, quantity: str, them: dict) -> dict:
    from graphnorm.provenance import git_sha

    return {"date_utc": stamp, "commit": git_sha(), "panel": panel, "quantity": quantity,
            "molecules": them["molecules"], "graphnorm": them["ours"],
            "admet_ai": them["theirs"], "verdict": them["verdict"]}


def _append(ledger, rows: list) -> None:
    """``rows`` (`_ledger_row`) at the end of the zero-shot ledger, when one is given."""
    if ledger:
        pd.DataFrame(rows).to_csv(ledger, mode="a", header=not Path(ledger).exists(),
                                  index=False)


def score_finetuned(lso: Path, ledger) -> pd.DataFrame:
    """Per scored source of the joint build: the fine-tuned run F (and its two members, for
    information) against the build's head-only column H (LSO/<source>/versus/ours.csv) and
    ADMET-AI (its cached peer.csv), on the source's zero-shot molecules; F's rows against
    ADMET-AI appended to ``ledger``."""
    import datetime
    import json
    import subprocess

    from graphnorm.inference.panel_versus import measured_molecules
    from graphnorm.panel.versus import Match, versus

    left_out = json.loads((lso / "run" / "pretrain.json").read_text())["leave_out"]
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    rows, ledger_rows = [], []
    for source in left_out:
        q = quantity_of_source(source)
        folder, run = lso / _safe(source), lso / "finetune" / "runs" / q
        molecules = measured_molecules([folder / "measured.csv"], [q])
        work = folder / "finetuned"
        work.mkdir(exist_ok=True)
        molecules[["smiles"]].to_csv(work / "molecules.csv", index=False)
        head = pd.read_csv(folder / "versus" / "ours.csv")[[f"quantity/{q}"]]
        peer = pd.read_csv(folder / "versus" / "peer.csv")
        row = {"source": source, "quantity": q, "H": None}
        for arm, member in (("F", ""), ("F graph member", "model_0"), ("F gbm member", "gbm")):
            path = work / f"{arm.replace(' ', '_')}.csv"
            if not path.is_file():
                subprocess.run(["graphnorm", "predict", "--checkpoint", str(run / member),
                                "--input", str(work / "molecules.csv"), "--output", str(path)],
                               check=True, capture_output=True)
            ours = pd.read_csv(path)[["prediction"]]
            them = versus(molecules, ours, peer, [Match(q, "prediction", ADMET_AI[q])])[0]
            mine = versus(molecules, ours, head, [Match(q, "prediction", f"quantity/{q}")])[0]
            row.update(_cells(arm, them, mine))
            if arm == "F":
                ledger_rows.append(_ledger_row(
                    stamp, f"train --recipe admet from {lso}/run without {source} (F)", q, them))
        rows.append(row)
    _append(ledger, ledger_rows)
    return pd.DataFrame(rows)


def readout_matrix(smiles: list, featurizer, wide: bool = False) -> np.ndarray:
    """What the panel's readout boosters read of each molecule (Morgan counts and the build's
    fast descriptors, `panel.boosters.readout_features`; with ``wide`` also `avalon_erg`),
    NaN rows where it cannot."""
    from graphnorm.chem.featurize import DESCRIPTORS, featurize_many
    from graphnorm.panel.boosters import morgan_counts, readout_features

    done = featurize_many(smiles, featurizer)
    width = next(g[DESCRIPTORS].shape[-1] for g in done.graphs if g is not None)
    descriptors = np.stack([g[DESCRIPTORS].reshape(-1) if g is not None
                            else np.full(width, np.nan, np.float32) for g in done.graphs])
    base = readout_features(morgan_counts(smiles), descriptors)
    return np.concatenate([base, avalon_erg(smiles)], 1) if wide else base


def avalon_erg(smiles: list) -> np.ndarray:
    """float32 [N, 1024 + 315]: Avalon counts and the ErG fingerprint (RULE.md amendment W),
    NaN rows for a SMILES RDKit cannot read."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import rdReducedGraphs

    from graphnorm.chem.tabular import _avalon_counts

    RDLogger.DisableLog("rdApp.*")
    out = np.full((len(smiles), 1024 + 315), np.nan, np.float32)
    for k, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s)
        if mol is not None:
            out[k] = np.concatenate([_avalon_counts(mol),
                                     np.asarray(rdReducedGraphs.GetErGFingerprint(mol))])
    return out


def score_blend(lso: Path, ledger, wide: bool = False) -> pd.DataFrame:
    """RULE.md "the head blended with a booster the panel can afford" (session 57): per scored
    source, B = (H + G) / 2, G the panel's readout booster fitted on F's table of the quantity
    (LSO/finetune/<quantity>.csv), against H and ADMET-AI. With ``wide``, amendment W
    (session 58): BW = (H + GW) / 2, GW reading `avalon_erg` too, against B and ADMET-AI.
    The deciding arm's rows against ADMET-AI are appended to ``ledger``."""
    import datetime
    import json

    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.inference.panel_versus import measured_molecules
    from graphnorm.panel.boosters import booster_estimator
    from graphnorm.panel.versus import Match, versus

    featurizer = load_checkpoint(lso / "run" / "best.ckpt").featurizer
    left_out = json.loads((lso / "run" / "pretrain.json").read_text())["leave_out"]
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    variants = {"G": False, "GW": True} if wide else {"G": False}
    boosters, rows, ledger_rows = {}, [], []

    def booster_column(q: str, variant: str, smiles: list) -> np.ndarray:
        if (q, variant) not in boosters:  # one booster per quantity, seed 0, panel settings
            table = pd.read_csv(lso / "finetune" / f"{q}.csv")
            x = readout_matrix(table["smiles"].tolist(), featurizer, variants[variant])
            ok = np.isfinite(x).all(1)
            boosters[q, variant] = booster_estimator(False, None, threads=2).fit(
                x[ok], table[q].to_numpy()[ok])
        x = readout_matrix(smiles, featurizer, variants[variant])
        g = np.full(len(x), np.nan)
        ok = np.isfinite(x).all(1)
        g[ok] = boosters[q, variant].predict(x[ok])
        return g

    for source in left_out:
        q = quantity_of_source(source)
        folder = lso / _safe(source)
        molecules = measured_molecules([folder / "measured.csv"], [q])
        head = pd.read_csv(folder / "versus" / "ours.csv")[f"quantity/{q}"].to_numpy()
        arms = pd.DataFrame({"H": head})
        for variant in variants:
            arms[variant] = booster_column(q, variant, molecules["smiles"].tolist())
            arms["B" + variant[1:]] = (head + arms[variant]) / 2
        peer = pd.read_csv(folder / "versus" / "peer.csv")
        row = {"source": source, "quantity": q}
        deciding, base = ("BW", "B") if wide else ("B", "H")
        shown = (deciding, "GW") if wide else (deciding, "G")
        for arm in shown:
            them = versus(molecules, arms, peer, [Match(q, arm, ADMET_AI[q])])[0]
            mine = versus(molecules, arms, arms, [Match(q, arm, base)])[0]
            row.update(_cells(arm, them, mine, base))
            if arm == deciding:
                what = "Morgan + Avalon + ErG booster (BW)" if wide else "Morgan booster (B)"
                ledger_rows.append(_ledger_row(
                    stamp, f"head + {what} / 2 from {lso}/run without {source}", q, them))
        rows.append(row)
    _append(ledger, ledger_rows)
    return pd.DataFrame(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    sub.add_parser("plan")
    sub.add_parser("joint").add_argument("--out", type=Path, required=True)
    steps = {name: sub.add_parser(name) for name in ("one", "finetune", "score-finetuned",
                                                     "score-blend", "table")}
    for name, step in steps.items():
        if name != "table":
            step.add_argument("--lso", type=Path, required=True, help="the joint form's folder")
        if name not in ("finetune", "table"):
            step.add_argument("--ledger", help="append the scorings' rows to this ledger")
    for name in ("one", "table"):
        steps[name].add_argument("--source", required=True)
        steps[name].add_argument("--out", type=Path, required=True)
    steps["one"].add_argument("--max-time", default="55m", help="this call's share of a build")
    steps["score-blend"].add_argument("--wide", action="store_true",
                                      help="amendment W: BW (Avalon counts and ErG added)")
    args = p.parse_args()
    if args.step == "one":
        print(one(args.source, args.lso, args.out, args.max_time, args.ledger))
        return
    if args.step in ("score-finetuned", "score-blend"):
        table = (score_finetuned(args.lso, args.ledger) if args.step == "score-finetuned"
                 else score_blend(args.lso, args.ledger, args.wide))
        with pd.option_context("display.width", 250, "display.max_columns", 20):
            print(table.round(3).to_string(index=False))
        return
    corpus, quantity_of = quantity_corpus()
    if args.step in ("plan", "joint", "finetune"):
        print(plan(corpus, quantity_of).to_string(index=False) if args.step == "plan" else
              joint(corpus, quantity_of, args.out) if args.step == "joint" else
              finetune_tables(corpus, quantity_of, args.lso))
        return
    # one source's zero-shot molecules alone (`joint` writes every scored source's)
    args.out.mkdir(parents=True, exist_ok=True)
    zero_shot(corpus, quantity_of, args.source).to_csv(args.out / "measured.csv", index=False)
    print(f"-> {args.out / 'measured.csv'}; build and score it with `one`")


if __name__ == "__main__":
    main()
