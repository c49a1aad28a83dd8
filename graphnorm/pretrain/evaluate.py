"""Held-out scores of a pre-training run: held-out molecules, and held-out tasks by a probe.

- **Held-out molecules** (the scaffold split's validation molecules), on the trained tasks:
  the objective itself (``loss``), and per task ROC-AUC (binary; both classes present) or R²
  of the standardized target (regression), macro-averaged over tasks with at least
  `MIN_EVAL_LABELS` labels there (``auroc``, ``r2``).
- **Held-out tasks** (never trained): a linear probe on the frozen [VNode] embedding,
  ridge regression or logistic regression (scikit-learn), fitted on the task's training
  molecules and scored on its validation molecules is too few labels for most tasks, so the
  probe is cross-fitted over `PROBE_FOLDS` scaffold folds of the task's labelled molecules
  (each fold's molecules share no scaffold with the rest); ``probe`` is the mean over tasks
  of ROC-AUC (binary) and R² (regression), each also reported alone.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from .objective import TaskScaling, multitask_loss

MIN_EVAL_LABELS = 20
PROBE_FOLDS = 5
PROBE_MAX = 3000  # labelled molecules per held-out task in its probe


def _defined(metric: str, y: np.ndarray, p: np.ndarray) -> Optional[float]:
    """The panel's ``metric`` (`graphnorm.stats.bootstrap`, one definition for every panel
    score); None where it is undefined (one class, no variance)."""
    from graphnorm.stats.bootstrap import score

    value = score(metric, np.asarray(y, float), np.asarray(p, float)) if len(y) else np.nan
    return None if np.isnan(value) else value


def _auroc(y: np.ndarray, p: np.ndarray) -> Optional[float]:
    return _defined("rocauc", y, p)


def _r2(y: np.ndarray, p: np.ndarray) -> Optional[float]:
    return _defined("r2", y, p)


@torch.no_grad()
def forward_all(model, loader, labels_of) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(outputs [N, T], labels [N, T], [VNode] embeddings [N, D], corpus rows [N])."""
    model.eval()
    device = next(model.parameters()).device
    outs, ys, embs, rows = [], [], [], []
    for batch in loader:
        z, emb = model(batch.to(device), return_embeddings=True)  # ``batch`` stays on the CPU
        outs.append(z.float().cpu().numpy())
        ys.append(labels_of(batch.y).numpy())
        embs.append(emb.vnode.float().cpu().numpy())
        rows.append(batch.y.view(-1).round().long().numpy())
    return (np.concatenate(outs), np.concatenate(ys), np.concatenate(embs),
            np.concatenate(rows))


def molecule_scores(z: np.ndarray, y: np.ndarray, scaling: TaskScaling,
                    weighting: str) -> dict:
    """Held-out-molecule scores of the trained tasks (see the module docstring)."""
    loss = float(multitask_loss(torch.from_numpy(z), torch.from_numpy(y), scaling, weighting))
    aucs, r2s = [], []
    for t in np.flatnonzero(scaling.trained.numpy()):
        have = ~np.isnan(y[:, t])
        if have.sum() < MIN_EVAL_LABELS:
            continue
        if scaling.binary[t]:
            score = _auroc(y[have, t], z[have, t])
            aucs += [score] if score is not None else []
        else:
            std_y = (y[have, t] - float(scaling.mean[t])) / float(scaling.std[t])
            score = _r2(std_y, z[have, t])
            r2s += [score] if score is not None else []
    return {"loss": loss, "auroc": float(np.mean(aucs)) if aucs else None,
            "r2": float(np.mean(r2s)) if r2s else None, "tasks_auroc": len(aucs),
            "tasks_r2": len(r2s)}


def probe_scores(embeddings: np.ndarray, labels: np.ndarray, held: Sequence[int],
                 binary: Sequence[bool], names: Sequence[str], folds: np.ndarray,
                 seed: int = 0) -> dict:
    """Cross-fitted linear-probe scores of the held-out tasks: {"probe", "probe_auroc",
    "probe_r2", "per_task": {name: score}}. ``folds`` [N]: each molecule's scaffold fold."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    per_task, aucs, r2s = {}, [], []
    for t in held:
        have = np.flatnonzero(~np.isnan(labels[:, t]))
        if len(have) > PROBE_MAX:
            have = np.sort(rng.choice(have, PROBE_MAX, replace=False))
        if len(have) < MIN_EVAL_LABELS * 2:
            continue
        X, y, f = embeddings[have], labels[have, t], folds[have]
        pred = np.full(len(y), np.nan)
        for k in range(PROBE_FOLDS):
            train, test = f != k, f == k
            if not test.any() or not train.any() or (binary[t] and len(set(y[train])) < 2):
                continue
            scaler = StandardScaler().fit(X[train])
            model = (LogisticRegression(C=0.1, max_iter=500) if binary[t] else Ridge(alpha=10.0))
            model.fit(scaler.transform(X[train]), y[train])
            Xt = scaler.transform(X[test])
            pred[test] = model.decision_function(Xt) if binary[t] else model.predict(Xt)
        ok = ~np.isnan(pred)
        score = (_auroc if binary[t] else _r2)(y[ok], pred[ok]) if ok.sum() else None
        if score is None:
            continue
        per_task[names[t]] = round(score, 4)
        (aucs if binary[t] else r2s).append(score)
    scores = aucs + r2s
    return {"probe": float(np.mean(scores)) if scores else None,
            "probe_auroc": float(np.mean(aucs)) if aucs else None,
            "probe_r2": float(np.mean(r2s)) if r2s else None, "per_task": per_task}


def held_out_record(run, model, probe: bool) -> dict:
    """One evaluation of ``run``'s model: ``val_*`` (held-out molecules, if any) and, with ``probe``
    and a held-out task to probe, the probe's scores (``per_task`` among them). Torch's random
    state is left as it was (a loader draws a seed): when a run evaluates does not change what
    it trains, so a call stopped between evaluations resumes as if it had not stopped."""
    with torch.random.fork_rng(devices=[]):
        record = {}
        if len(run.val_set):  # none in a run that holds nothing out (--val-percent 0)
            z, y, _, _ = forward_all(model, run.val_loader(), run.labels_of)
            record = {f"val_{k}": v for k, v in molecule_scores(z, y, run.scaling,
                                                                  run.spec.weighting).items()}
        if probe and len(run.probe_set):
            _, y_p, emb, _ = forward_all(model, run.probe_loader(), run.labels_of)
            scores = probe_scores(emb, y_p, run.held_tasks, run.scaling.binary.tolist(),
                                  run.corpus.task_names, run.probe_folds)
            record.update(scores)
    model.train()
    return record
