"""Text demo: ShareNorm (ln) vs SepNorm (sep:bn+ln, sep:bn+bn) and an IsoBN [CLS] head.

No standard text classification set ships inside the installed packages (scikit-learn's
20 newsgroups and the nltk corpora are downloads; this demo runs offline), so two tasks are
built locally and named for what they are:

- ``synthetic-majority`` (SYNTHETIC): random token sequences of length 8-40 from 4 token
  groups plus neutral tokens; the label is the group with the most tokens in the sequence,
  a global statistic the [CLS] token has to aggregate. Ties are dropped.
- ``docstring-source`` (real English text, not a benchmark): the first paragraph of public
  docstrings found in the installed sklearn, networkx, matplotlib and pandas sources (read
  with ``ast``, nothing imported); the label is the package. Texts occurring in more than
  one package are dropped; data and split are fixed, seeds change init and batch order.

Every run trains a small post-LN BERT-style encoder (``graphnorm.text``) from scratch for a
fixed number of epochs (no early stopping, no model selection) and reports test accuracy.
With ``graphnorm.analysis`` available it also reports the uniformity L_U, EV_1 and the
effective rank of the test [CLS] embeddings (encoder output) and of the classifier input.

    python experiments/text_demo.py --seeds 3 --out experiments/results/text
"""
from __future__ import annotations

import argparse
import ast
import collections
import csv
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from graphnorm.text import TextClassifier, TextEncoder

try:  # written by another engineer; the demo runs without it
    from graphnorm.analysis import embedding_report
except ImportError:  # pragma: no cover
    embedding_report = None

PAD, CLS, UNK = 0, 1, 2
# label: (encoder norm spec, IsoBN before the classifier, LN for the constant [CLS] embedding)
CONFIGS = {
    "ln": ("ln", False, True),
    "sep:bn+ln": ("sep:bn+ln", False, True),
    "sep:bn+bn": ("sep:bn+bn", False, True),
    "ln + isobn head": ("ln", True, True),
    # not in the default set (CPU budget):
    "sep:bn+ln + isobn head": ("sep:bn+ln", True, True),
    "sep:bn+ln (bn on const cls)": ("sep:bn+ln", False, False),  # ablation, see encoder doc
    "sep:bn+bn (bn on const cls)": ("sep:bn+bn", False, False),
}
DEFAULT_CONFIGS = ("ln", "sep:bn+ln", "sep:bn+bn", "ln + isobn head")
DOC_PACKAGES = ("sklearn", "networkx", "matplotlib", "pandas")


# ------------------------------------------------------------------------------- data

def synthetic_majority(n: int, seed: int, groups: int = 4, per_group: int = 8,
                       neutral: int = 16) -> tuple[list[list[int]], list[int]]:
    """SYNTHETIC: label = most frequent token group; half the tokens are neutral noise."""
    rng = random.Random(seed)
    first_neutral = 3 + groups * per_group
    seqs, labels = [], []
    while len(seqs) < n:
        length = rng.randint(8, 40)
        weights = [rng.gammavariate(1.0, 1.0) for _ in range(groups)]  # Dirichlet(1, ..., 1)
        counts, seq = [0] * groups, []
        for _ in range(length):
            if rng.random() < 0.5:
                seq.append(first_neutral + rng.randrange(neutral))
            else:
                g = rng.choices(range(groups), weights)[0]
                counts[g] += 1
                seq.append(3 + g * per_group + rng.randrange(per_group))
        top = max(counts)
        if counts.count(top) == 1:  # a tie has no well-defined label
            seqs.append(seq)
            labels.append(counts.index(top))
    return seqs, labels


def _docstrings(package: str) -> set[str]:
    root = Path(sysconfig.get_paths()["purelib"]) / package
    texts = set()
    for path in sorted(root.rglob("*.py")):
        if {"tests", "test"} & set(path.parts):
            continue
        try:
            tree = ast.parse(path.read_text(errors="ignore"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.name.startswith("_"):
                doc = ast.get_docstring(node)
                words = re.findall(r"[a-z]+", doc.strip().split("\n\n")[0].lower()) if doc else []
                if len(words) >= 4:
                    texts.add(" ".join(words))
    return texts


def docstring_source(per_class: int = 700) -> tuple[list[str], list[int], list[str]]:
    """Real text: docstring summaries labelled by the package they come from."""
    found = {p: _docstrings(p) for p in DOC_PACKAGES}
    seen = collections.Counter(t for texts in found.values() for t in texts)
    rng = random.Random(0)
    texts, labels = [], []
    for label, package in enumerate(DOC_PACKAGES):
        unique = sorted(t for t in found[package] if seen[t] == 1)
        rng.shuffle(unique)
        texts += unique[:per_class]
        labels += [label] * len(unique[:per_class])
    return texts, labels, list(DOC_PACKAGES)


def split(n: int, test_frac: float = 0.2) -> tuple[list[int], list[int]]:
    idx = list(range(n))
    random.Random(1).shuffle(idx)
    cut = int(n * (1 - test_frac))
    return idx[:cut], idx[cut:]


def to_tensor(seqs: list[list[int]], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[CLS] + tokens, right-padded; returns ids [N, L] and padding_mask [N, L] (True = pad)."""
    seqs = [[CLS] + s[: max_len - 1] for s in seqs]
    L = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), L), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    return ids, ids.eq(PAD)


def build_task(name: str, max_len: int) -> dict:
    t0 = time.perf_counter()
    if name == "synthetic-majority":
        seqs, labels = synthetic_majority(2400, seed=0)
        tr, te = split(len(seqs))
        classes, vocab = ["g0", "g1", "g2", "g3"], 3 + 4 * 8 + 16
    elif name == "docstring-source":
        texts, labels, classes = docstring_source()
        tr, te = split(len(texts))
        freq = collections.Counter(w for i in tr for w in texts[i].split())
        words = sorted(w for w, c in freq.items() if c >= 2)  # train-only vocabulary
        index = {w: k + 3 for k, w in enumerate(words)}
        seqs = [[index.get(w, UNK) for w in t.split()] for t in texts]
        vocab = 3 + len(words)
    else:
        raise ValueError(f"unknown task {name!r}")
    y = torch.tensor(labels)
    out = {"name": name, "classes": classes, "vocab": vocab, "n_train": len(tr), "n_test": len(te)}
    for part, idx in (("train", tr), ("test", te)):
        ids, pad = to_tensor([seqs[i] for i in idx], max_len)
        out[part] = (ids, pad, y[idx])
    out["build_s"] = time.perf_counter() - t0
    return out


# ------------------------------------------------------------------------ train / eval

@torch.no_grad()
def evaluate(model: TextClassifier, data, batch_size: int = 512) -> tuple[float, torch.Tensor, torch.Tensor]:
    """Accuracy, [CLS] encoder outputs and classifier inputs on ``data`` (eval mode)."""
    model.eval()
    correct, cls, feats = 0, [], []
    ids, pad, y = data
    for s in range(0, len(y), batch_size):
        h = model.encoder(ids[s:s + batch_size], pad[s:s + batch_size])
        correct += int((model.head(h).argmax(-1) == y[s:s + batch_size]).sum())
        cls.append(h[:, 0])
        feats.append(model.head.features(h))
    return correct / len(y), torch.cat(cls), torch.cat(feats)


CLS_SEED0: dict = {}  # (task, config) -> test-set [CLS] embeddings of seed 0


def plot_cls(out: Path) -> None:
    """[CLS] spectra, explained variance and per-dimension distributions, configs side by side."""
    from graphnorm.analysis import (plot_dimension_distributions, plot_explained_variance,
                                    plot_spectra, singular_values)

    for task in sorted({t for t, _ in CLS_SEED0}):
        z = {c: v for (t, c), v in CLS_SEED0.items() if t == task}
        plot_spectra({c: singular_values(v) for c, v in z.items()}, out / f"cls_spectra_{task}.png")
        plot_explained_variance(z, out / f"cls_explained_variance_{task}.png")
        plot_dimension_distributions(z, out / f"cls_dimensions_{task}.png")


def train_run(task: dict, config: str, seed: int, args) -> dict:
    norm, isobn_head, constant_cls_ln = CONFIGS[config]
    torch.manual_seed(seed)
    enc = TextEncoder(task["vocab"], dim=args.dim, depth=args.depth, heads=4, max_len=args.max_len,
                      norm=norm, dropout=0.1, pad_id=PAD, constant_cls_ln=constant_cls_ln)
    model = TextClassifier(enc, len(task["classes"]), isobn_head=isobn_head, dropout=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    ids, pad, y = task["train"]
    steps = args.epochs * math.ceil(len(y) / args.batch_size)
    warmup = max(1, steps // 10)  # linear warmup then linear decay, as in BERT fine-tuning
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))
    gen = torch.Generator().manual_seed(seed)
    t0, losses = time.perf_counter(), []
    for _ in range(args.epochs):
        model.train()
        for batch in torch.randperm(len(y), generator=gen).split(args.batch_size):
            # trim to the longest sequence of the batch: less compute, same result
            L = int((~pad[batch]).sum(1).max())
            loss = F.cross_entropy(model(ids[batch, :L], pad[batch, :L]), y[batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
    train_s = time.perf_counter() - t0
    acc, cls, feats = evaluate(model, task["test"])
    if seed == 0:  # kept for the [CLS] plots of the report
        CLS_SEED0[(task["name"], config)] = cls
    row = {"task": task["name"], "config": config, "seed": seed, "test_acc": acc,
           "final_train_loss": statistics.mean(losses[-20:]), "train_s": train_s}
    if embedding_report is not None:
        for prefix, z in (("cls", cls), ("head_in", feats)):
            rep = embedding_report(z)
            row[f"{prefix}_uniformity"] = rep["uniformity"]
            row[f"{prefix}_ev1"] = rep["ev_1"]
            row[f"{prefix}_eff_rank"] = rep["effective_rank"]
    return row


# ------------------------------------------------------------------------------ report

def _git_sha() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True,
                               text=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown (no commit yet)"


def _mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def summarize(rows: list[dict], tasks: dict, args, wall_s: float, out: Path) -> None:
    metrics = [k for k in rows[0] if k not in ("task", "config", "seed")]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["task"], r["config"])].append(r)
    summary = []
    for (task, config), rs in groups.items():
        s = {"task": task, "config": config, "n_seeds": len(rs)}
        for m in metrics:
            vals = [r[m] for r in rs if r[m] is not None]
            if vals:
                s[f"{m}_mean"], s[f"{m}_std"] = _mean_std(vals)
        summary.append(s)
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    with open(out / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    cmd = "python " + " ".join(sys.argv)
    lines = [
        "# Text demo: ShareNorm vs SepNorm vs IsoBN head (CPU, small models from scratch)", "",
        f"- command: `{cmd}`",
        f"- git sha: {_git_sha()}",
        f"- seeds: {args.seeds} ({', '.join(str(s) for s in range(args.seeds))}); wall time "
        f"{wall_s:.0f} s on {torch.get_num_threads()} CPU thread(s) of a shared machine "
        f"(load average {args.load_at_start:.1f} at start; budget ~300 s)",
        f"- model: post-LN encoder, dim {args.dim}, depth {args.depth}, 4 heads, max_len "
        f"{args.max_len}; AdamW lr {args.lr}, batch {args.batch_size}, {args.epochs} epochs, "
        "warmup 10% + linear decay, dropout 0.1; fixed epochs, test accuracy of the last epoch",
        "- norms: the spec is used for the embedding norm and both norms of every block, "
        "except that the embedding norm keeps LN for the constant [CLS] embedding "
        "(`TextEncoder(constant_cls_ln=True)`; the `bn on const cls` configs switch this "
        "off); `+ isobn head` = IsoBN (beta 0.5) on [CLS] right before the linear classifier",
        "",
    ]
    for name, task in tasks.items():
        label = "SYNTHETIC" if name.startswith("synthetic") else "real text, not a benchmark"
        lines += [f"## {name} ({label})", "",
                  f"{task['n_train']} train / {task['n_test']} test, {len(task['classes'])} "
                  f"classes ({', '.join(task['classes'])}), vocab {task['vocab']}, chance "
                  f"{1 / len(task['classes']):.2f}", ""]
        cols = ["test_acc", "final_train_loss", "cls_uniformity", "cls_ev1", "cls_eff_rank",
                "head_in_ev1"]
        cols = [c for c in cols if any(f"{c}_mean" in s for s in summary)]
        lines += ["| config | " + " | ".join(cols) + " | train s |",
                  "|---" * (len(cols) + 2) + "|"]
        for s in summary:
            if s["task"] != name:
                continue
            cells = [f"{s[c + '_mean']:.3f} ± {s[c + '_std']:.3f}" if c + "_mean" in s else "-"
                     for c in cols]
            lines.append(f"| {s['config']} | " + " | ".join(cells) + f" | {s['train_s_mean']:.1f} |")
        lines.append("")
    if embedding_report is not None:
        lines += ["Analysis on the test set (graphnorm.analysis): `cls_*` = final [CLS] hidden "
                  "state (encoder output, after the last norm); `head_in_ev1` = EV_1 of the "
                  "vector the linear classifier sees (after IsoBN when present). Uniformity "
                  "L_U (seed paper Eq. 4, lower = more uniform), EV_1 = share of variance in "
                  "the top principal direction (IsoBN Eq. 9, lower = more isotropic).", ""]
    lines += ["Per-run numbers: `runs.csv`; aggregated: `summary.csv`."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("experiments/results/text"))
    p.add_argument("--tasks", default="synthetic-majority,docstring-source")
    p.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                   help="comma list of: " + ", ".join(CONFIGS))
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--max-len", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads; 1 avoids oversubscription on a shared 2-core machine")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.load_at_start = os.getloadavg()[0]  # timings depend on what else runs
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    tasks = {name: build_task(name, args.max_len) for name in args.tasks.split(",")}
    for t in tasks.values():
        print(f"{t['name']}: {t['n_train']} train / {t['n_test']} test, built in {t['build_s']:.1f} s")
    rows = []
    for name, task in tasks.items():
        for config in args.configs.split(","):
            for seed in range(args.seeds):
                row = train_run(task, config, seed, args)
                rows.append(row)
                print(f"{name:20s} {config:24s} seed {seed}: acc {row['test_acc']:.3f} "
                      f"loss {row['final_train_loss']:.3f} ({row['train_s']:.1f} s)", flush=True)
    wall = time.perf_counter() - t0
    summarize(rows, tasks, args, wall, args.out)
    if embedding_report is not None:
        plot_cls(args.out)
    (args.out / "config.json").write_text(json.dumps(
        {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, indent=1))
    print(f"done in {wall:.0f} s -> {args.out}/summary.md")


if __name__ == "__main__":
    main()
