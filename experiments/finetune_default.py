"""RULE.md L and M: fine-tuning a backbone against training from scratch, pooled over tasks
and seeds on three development suites (experiments/results/pretrain/rule_l/, rule_m/).

    python experiments/finetune_default.py tables  --work W        # corpus + ASAP tables
    python experiments/finetune_default.py run     --work W --suite corpus --arm admet
    python experiments/finetune_default.py run     --work W --suite asap   --arm none --seeds 3 4 5
    python experiments/finetune_default.py run     --work W --suite corpus --arm PATH/best.ckpt \\
        --label q-SHA8 --seeds 1                                   # a backbone by path (M)
    python experiments/finetune_default.py tdc-rows --work W   # W/tdc as score rows (to commit)
    python experiments/finetune_default.py summary --work W --out experiments/results/pretrain/rule_l
    python experiments/finetune_default.py summary --work W --rule M --arm q-SHA8 --out .../rule_m
    python experiments/finetune_default.py run     --work W --suite asap --recipe auto --arm none --seeds 6 7 8   # N
    python experiments/finetune_default.py run     --work W --suite corpus --recipe auto --arm none --seeds 2 --reverse
                                                                   # a second stream, from the end
    python experiments/finetune_default.py run     --work W --suite asap --arm admet --label blr0.1 \
        --flags "--backbone-lr 0.1" --seeds 9 10 11                # P
    python experiments/finetune_default.py run     --work W --suite corpus --arm X.ckpt \
        --label r-base --seeds 4                                   # R (and --arm Y.ckpt --label y-SHA8)

``summary`` pools each suite (`graphnorm.bench.pooled`: one interval per suite), applies the
rule, and writes ``OUT/summary.json`` and ``OUT/summary.md``.

Each (suite, recipe, arm, task, seed) is one ``graphnorm train --data`` and one ``graphnorm
predict`` on the molecules set aside, as a user would run them; its score lands in
``W/results.jsonl`` as it finishes (a rerun skips it: resumable). The ASAP test scorings are
appended to ``experiments/results/asap_admet/ledger.csv``.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


ROOT = Path(__file__).resolve().parents[1]
RAW = Path(os.environ.get("GRAPHNORM_RAW_DIR", ROOT.parent / "shared" / "datasets"))
GRAPHNORM = str(Path(sys.executable).parent / "graphnorm")
PANEL = ROOT / "graphnorm" / "pretrained" / "admet" / "panel.json"
MIN_HELD, CAP, ASIDE_FOLDS, MIN_CLASS = 300, 1200, 5, 10
VAL_PERCENT = 15  # the shipped backbone's held-out scaffolds (source.json spec)
SEEDS = {"corpus": (0, 1, 2, 3, 4), "asap": tuple(range(15))}
ASAP_TARGETS = ("LogD", "KSOL_uM", "HLM_CLint", "MLM_CLint", "MDR1_MDCKII_Papp")


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _safe(task: str) -> str:
    return task.replace("/", "__")


def corpus_tables(work: Path) -> list[dict]:
    """The corpus suite's tables: each judged endpoint's labelled held-out molecules (as the
    shipped run held them out), split per seed into the user's table and the set-aside."""
    from rdkit import Chem, rdBase

    from graphnorm.data.scaffold import murcko_scaffold, scaffold_bucket
    from graphnorm.pretrain.corpus import load_corpus, loose_key
    from graphnorm.pretrain.data import MAX_ATOMS
    from graphnorm.pretrain.splits import benchmark_keys

    panel = json.loads(PANEL.read_text())
    chosen = [e for e in panel["endpoints"] if e.get("judged") and e["n_select"] + e["n"] >= MIN_HELD]
    corpus = load_corpus(RAW)
    excluded = benchmark_keys(RAW / "tdc_admet_group")
    molecule = np.repeat(np.arange(len(corpus)), np.diff(corpus.indptr))
    made = []
    for e in chosen:
        t = corpus.task_names.index(e["task"])
        held = []
        for row, y in zip(molecule[corpus.task == t], corpus.value[corpus.task == t]):
            s = corpus.smiles[row]
            with rdBase.BlockLogs():
                mol = Chem.MolFromSmiles(s)
            if mol is None or mol.GetNumAtoms() > MAX_ATOMS:
                continue
            key, scaf = loose_key(s), murcko_scaffold(s, mol)
            if (key if key is not None else s) in excluded:
                continue
            if scaffold_bucket(scaf, s) < VAL_PERCENT:
                held.append((s, float(y), scaf or s))
        held = sorted(held, key=lambda m: _hash(m[0]))[:CAP]
        frame = pd.DataFrame(held, columns=["smiles", "Y", "group"])
        for seed in SEEDS["corpus"]:
            aside = frame["group"].map(lambda g: _hash(f"{seed}:{g}") % ASIDE_FOLDS == 0)
            folder = work / "corpus" / _safe(e["task"]) / f"seed{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            frame.loc[~aside, ["smiles", "Y"]].to_csv(folder / "table.csv", index=False)
            frame.loc[aside, ["smiles", "Y"]].to_csv(folder / "aside.csv", index=False)
            made.append({"task": e["task"], "seed": seed, "kind": e["kind"],
                         "held": len(held), "panel_held": e["n_select"] + e["n"],
                         "table": int((~aside).sum()), "aside": int(aside.sum())})
    (work / "corpus" / "tables.json").write_text(json.dumps(made, indent=1))
    return made


def asap_transform(frame: pd.DataFrame) -> pd.DataFrame:
    """The official scale: LogD as is, every other endpoint log10(clip(y, 0) + 1)."""
    out = frame.copy()
    for c in ASAP_TARGETS[1:]:
        out[c] = np.log10(out[c].clip(lower=0) + 1)
    return out


def asap_tables(work: Path) -> None:
    folder = work / "asap"
    folder.mkdir(parents=True, exist_ok=True)
    train = asap_transform(pd.read_csv(RAW / "asap_admet" / "train.csv"))
    # separately registered stereoisomers collapse to one SMILES: their values averaged
    train.groupby("smiles", sort=False)[list(ASAP_TARGETS)].mean().reset_index() \
        .to_csv(folder / "table.csv", index=False)
    asap_transform(pd.read_csv(RAW / "asap_admet" / "test.csv")).to_csv(folder / "aside.csv",
                                                                        index=False)


def _units(work: Path, suite: str) -> list[tuple[str, int, Path, tuple[str, ...]]]:
    """(task, seed, folder, target columns) of every run of a suite."""
    if suite == "asap":
        return [("asap", s, work / "asap", ASAP_TARGETS) for s in SEEDS["asap"]]
    tables = json.loads((work / "corpus" / "tables.json").read_text())
    return [(t["task"], t["seed"], work / "corpus" / _safe(t["task"]) / f"seed{t['seed']}", ("Y",))
            for t in tables]


def _done(results: Path) -> set[tuple]:
    if not results.exists():
        return set()
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {(r["suite"], r["recipe"], r["arm"], r["task"], r["seed"]) for r in rows}


def _score(kind: str, y: np.ndarray, p: np.ndarray) -> tuple[str, float]:
    from sklearn.metrics import roc_auc_score

    if kind == "binary":
        return "rocauc", float(roc_auc_score(y, p))
    return "mae", float(np.mean(np.abs(y - p)))


def _claim(work: Path, unit: tuple) -> bool:
    """True when this process may run ``unit``: an atomic mkdir, so two streams working
    through one suite (one of them ``--reverse``) never train the same run twice."""
    claims = work / "claims"
    claims.mkdir(exist_ok=True)
    try:
        (claims / _safe("-".join(map(str, unit)))).mkdir()
    except FileExistsError:
        return False
    return True


def run_suite(work: Path, suite: str, arm: str, recipe: str, seeds=None, label=None,
              flags: str = "", reverse: bool = False) -> None:
    """Train and score every (task, seed) of ``suite`` not yet in results.jsonl, starting from
    ``arm`` (``--init-from``: none, admet or a checkpoint path), recorded as ``label``;
    ``flags``: more ``train`` flags (rule P: ``--backbone-lr 0.1``); ``reverse``: from the
    last unit, for a second stream on the same suite."""
    label = label or arm
    results = work / "results.jsonl"
    kinds = {t["task"]: t["kind"] for t in json.loads((work / "corpus" / "tables.json").read_text())} \
        if suite == "corpus" else {}
    units = _units(work, suite)
    for task, seed, folder, targets in (units[::-1] if reverse else units):
        unit = (suite, recipe, label, task, seed)
        if unit in _done(results) or (seeds is not None and seed not in seeds) \
                or not _claim(work, unit):
            continue
        aside = pd.read_csv(folder / "aside.csv")
        kind = kinds.get(task, "regression")
        if kind == "binary" and min((aside.Y == 1).sum(), (aside.Y == 0).sum()) < MIN_CLASS:
            row = {"suite": suite, "recipe": recipe, "arm": label, "task": task, "seed": seed,
                   "dropped": f"fewer than {MIN_CLASS} of a class aside"}
        else:
            row = _train_and_score(work, suite, arm, recipe, task, seed, folder, targets, kind,
                                   label, flags)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def _train_and_score(work, suite, arm, recipe, task, seed, folder, targets, kind, label,
                     flags: str = "") -> dict:
    out = work / "runs" / suite / recipe / label / _safe(task) / f"seed{seed}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.time()
    load = os.getloadavg()[0]
    cmd = [GRAPHNORM, "train", "--data", str(folder / "table.csv"), "--target-columns",
           *targets, "--init-from", arm, "--seed", str(seed), "--threads", "1",
           "--no-progress", "--out", str(out)]
    if recipe != "auto":
        cmd += ["--recipe", recipe]
    cmd += shlex.split(flags)
    if not (out / "metrics.json").exists():
        shutil.rmtree(out, ignore_errors=True)  # a run cut short: train it again whole
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    pred = out / "aside_pred.csv"
    subprocess.run([GRAPHNORM, "predict", "--checkpoint", str(out), "--input",
                    str(folder / "aside.csv"), "--output", str(pred)], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    frame = pd.read_csv(pred)
    scores = {}
    for c in targets:
        # a target name the output reuses moves the input's column to <name>_input
        truth, col = (f"{c}_input", c) if f"{c}_input" in frame else (c, "prediction")
        have = frame[truth].notna() & frame[col].notna()
        metric, scores[c] = _score(kind, frame.loc[have, truth].to_numpy(float),
                                   frame.loc[have, col].to_numpy(float))
    return {"suite": suite, "recipe": recipe, "arm": label, "task": task, "seed": seed,
            "metric": metric, "scores": scores,
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "wall_s": round(time.time() - wall, 1), "load": round(load, 2),
            "command": " ".join(cmd[1:]), "code": _code()}


@functools.lru_cache(maxsize=None)  # one git call per process, not one per run
def _code() -> str:
    """The commit whose graphnorm the run imported (PYTHONPATH may point at a frozen
    worktree, so it is read from the package's own folder)."""
    import graphnorm

    return subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True,
                          text=True, cwd=Path(graphnorm.__file__).parent).stdout.strip()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("tables", "run", "tdc-rows", "summary"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--suite", choices=("corpus", "asap"))
    parser.add_argument("--arm", help="run: what --init-from is given (none, admet, a "
                        "checkpoint path); summary: the fine-tuned arm's label")
    parser.add_argument("--label", help="run: the arm's name in results.jsonl when --arm is "
                        "a path (default: --arm)")
    parser.add_argument("--flags", default="", help="run: more train flags, e.g. "
                        "'--backbone-lr 0.1' (rule P; give the arm its own --label)")
    parser.add_argument("--rule", default="L", choices=("L", "M", "N", "P", "R"))
    parser.add_argument("--recipe", default="admet", choices=("admet", "auto"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", help="run: only these seeds")
    parser.add_argument("--reverse", action="store_true", help="run: from the suite's last "
                        "unit (a second stream; claims keep the two apart)")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step == "tables":
        asap_tables(args.work)
        print(json.dumps(corpus_tables(args.work), indent=1))
    elif args.step == "tdc-rows":  # W/tdc's finished runs as score rows, to commit (N, s. 51)
        from finetune_summary import tdc_rows

        print(f"{len(tdc_rows(args.work))} rows in {args.work / 'tdc_rows.jsonl'}")
    elif args.step == "run":
        run_suite(args.work, args.suite, args.arm, args.recipe, args.seeds, args.label, args.flags,
                  args.reverse)
    else:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=ROOT).stdout.strip()
        from finetune_summary import ledger_asap, summarize

        ledger_asap(args.work, commit, args.rule)
        summarize(args.work, args.out, args.recipe, commit, args.rule, args.arm or "admet")


if __name__ == "__main__":
    main()
