"""The networks a panel folder averages: its ``best.ckpt`` alone, or with the members that
``graphnorm panel ensemble`` put beside it (``member_1.ckpt``, ...: the same recipe trained
with other seeds, holding out the same scaffolds).

An ensemble predicts the plain mean of its members' head outputs on the run's standardized
scale (`graphnorm.ensemble.Ensemble.combine`): for a regression endpoint the mean in its unit
(the scale is linear), for a binary one the mean logit, which the panel then Platt-scales on
its selection half as it does one network's. Its [VNode] embedding is the members' side by
side, so the far-from-training yardstick places a molecule in every member's view at once.
Members that differ by seed alone are the "deep ensembles" of Lakshminarayanan et al. 2017,
*Simple and scalable predictive uncertainty estimation using deep ensembles*,
https://arxiv.org/abs/1612.01474; ADMET-AI averages five such models.

Every reader of a panel folder's networks (`graphnorm panel build | readouts | versus-gbm`,
``graphnorm admet``, ``explain``, ``serve``) loads them here.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import torch

from .record import PanelFileError

MEMBER_NAME = re.compile(r"member_(\d+)\.ckpt")
MEMBERS_FILE = "members.json"  # where an assembled folder's members came from
RECIPE_FREE = ("seed",)  # the only spec field in which an ensemble's members may differ


def member_file(folder, k: int) -> Path:
    """Member ``k``'s checkpoint in ``folder``: ``best.ckpt`` for 0, else ``member_<k>.ckpt``."""
    from graphnorm.pretrain.folder import BEST_FILE

    return Path(folder) / (BEST_FILE if k == 0 else f"member_{k}.ckpt")


def member_files(folder) -> list[Path]:
    """``best.ckpt`` and the members beside it, in order; a gap in their numbers (a member
    lost) is a PanelFileError naming the folder."""
    folder = Path(folder)
    numbers = sorted(int(m.group(1)) for p in folder.glob("member_*.ckpt")
                     if (m := MEMBER_NAME.fullmatch(p.name)))
    if numbers != list(range(1, len(numbers) + 1)):
        raise PanelFileError(f"{folder}: ensemble members {numbers} are not numbered 1 to "
                             f"{len(numbers)}: one is missing (assemble it again: graphnorm "
                             "panel ensemble)")
    return [member_file(folder, k) for k in range(len(numbers) + 1)]


def digests(folder) -> list[str]:
    """The sha256 of each member's checkpoint, in order (what a panel file names)."""
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in member_files(folder)]


class NetworkMean(torch.nn.Module):
    """Networks that share their outputs and scaling, averaged (module docstring):
    ``forward(batch) -> [B, T]`` the mean; with ``return_embeddings`` also the members'
    `GraphEmbeddings` side by side ([B, M·D] and [B, N, M·D])."""

    def __init__(self, members):
        from graphnorm.ensemble import Ensemble, Member

        super().__init__()
        self.members = torch.nn.ModuleList(members)
        self.ensemble = Ensemble(tuple(Member(None) for _ in members))

    def forward(self, batch, return_embeddings: bool = False):
        if not return_embeddings:
            return self.ensemble.combine(torch.stack([m(batch) for m in self.members]))
        from graphnorm.graph.graphormer import GraphEmbeddings

        outs = [m(batch, return_embeddings=True) for m in self.members]
        pred = self.ensemble.combine(torch.stack([p for p, _ in outs]))
        embs = [e for _, e in outs]
        return pred, GraphEmbeddings(torch.cat([e.vnode for e in embs], -1),
                                     torch.cat([e.tokens for e in embs], -1), embs[0].node_mask)


def check_built_for(panel, folder) -> None:
    """A PanelFileError naming the panel file when ``panel`` was not built from exactly the
    networks in ``folder`` (every reader that trusts the panel's choices checks this first);
    it names the member file that is missing, extra or not the one the panel was built on."""
    from .record import PANEL_FILE

    files, now = member_files(folder), digests(folder)
    if panel.checkpoints == now:
        return
    built = list(panel.checkpoints)
    if len(built) > len(now):
        gone = [member_file(folder, k).name for k in range(len(now), len(built))]
        why = f"it was built on {len(built)} networks; {', '.join(gone)} missing"
    elif len(built) < len(now):
        why = (f"it was built on {len(built)} networks; "
               f"{', '.join(p.name for p in files[len(built):])} not among them")
    else:
        k = next(i for i, (a, b) in enumerate(zip(built, now)) if a != b)
        why = (f"{files[k].name} is not the file it was built on (sha256 {now[k][:12]}, built on "
               f"{built[k][:12]}): replaced, or damaged in a copy")
    raise PanelFileError(f"{Path(folder) / PANEL_FILE} does not match the networks {folder} "
                         f"holds now: {why}; restore that file, or build the panel again "
                         "(graphnorm panel build RUN)")


def load_networks(folder):
    """The `LoadedModel` a panel folder predicts with: ``best.ckpt``'s, its model the
    `NetworkMean` of every member when there are several. Members that do not share the
    first's outputs, scaling or featurizer are refused, the file named."""
    from graphnorm.checkpoints import load_checkpoint

    files = member_files(folder)
    loaded = [load_checkpoint(f) for f in files]
    first = loaded[0]
    for path, other in zip(files[1:], loaded[1:]):
        same = {"outputs": other.targets == first.targets,
                "target scaling": bool(torch.equal(other.target_mean, first.target_mean)
                                       and torch.equal(other.target_std, first.target_std)),
                "featurizer": other.featurizer == first.featurizer}
        differ = [what for what, ok in same.items() if not ok]
        if differ:
            raise PanelFileError(f"{path} is not a member of {files[0]}'s ensemble: its "
                                 f"{' and '.join(differ)} differ (members are one recipe's "
                                 "runs, by seed)")
    if len(loaded) == 1:
        return first
    return replace(first, model=NetworkMean([m.model for m in loaded]).eval())


def assemble(out, runs, half: bool = False) -> Path:
    """``out``: a run folder whose networks are the ``runs``' ``best.ckpt`` (the first's as
    ``best.ckpt``, then ``member_<k>.ckpt``), with the first run's spec, data record, log and
    run record, so the panel commands treat it as that run. The runs must be one recipe:
    their ``pretrain.json`` equal but for the seed, the seeds all different. ``half``: each
    member's weights stored in float16 (`graphnorm.checkpoints.strip_checkpoint`), so that
    several fit the wheel; the panel is then built on exactly what is stored."""
    from graphnorm.checkpoints import strip_checkpoint
    from graphnorm.pretrain.folder import (BEST_FILE, DATA_FILE, LOG_FILE, SPEC_FILE,
                                           best_evaluation, check_trained, read_log)
    from graphnorm.run_folder import METRICS_FILE

    runs, out = [Path(r) for r in runs], Path(out)
    if len(runs) < 2:
        raise ValueError("an ensemble needs two runs or more")
    if out.resolve() in {r.resolve() for r in runs}:
        raise ValueError(f"{out}: assemble the ensemble into a folder of its own, not a member's")
    specs = [json.loads((check_trained(run) / SPEC_FILE).read_text()) for run in runs]
    for run, spec in zip(runs[1:], specs[1:]):
        differ = sorted(k for k in set(spec) | set(specs[0])
                        if k not in RECIPE_FREE and spec.get(k) != specs[0].get(k))
        if differ:
            raise ValueError(f"{run} is not the recipe of {runs[0]} ({', '.join(differ)} "
                             "differ): an ensemble's members share every choice but the seed")
    seeds = [s.get("seed") for s in specs]
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"seeds {seeds}: a seed twice would count one training twice")
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty: assemble an ensemble into a new folder (a "
                         "panel, its boosters and their rows belong to the networks they were "
                         "built on)")
    out.mkdir(parents=True, exist_ok=True)
    for name in (SPEC_FILE, DATA_FILE, LOG_FILE, METRICS_FILE):
        if (runs[0] / name).is_file():
            shutil.copyfile(runs[0] / name, out / name)
    for k, run in enumerate(runs):
        if half:
            strip_checkpoint(run / BEST_FILE, member_file(out, k), half=True)
        else:
            shutil.copyfile(run / BEST_FILE, member_file(out, k))
    # each member's best step: what its rebuild trains to (`rebuild.rebuild_lines`)
    steps = [best_evaluation(read_log(run)).get("step") for run in runs]
    record = [{"run": str(run), "seed": seed, "sha256": sha, "step": step}
              for run, seed, sha, step in zip(runs, seeds, digests(out), steps)]
    (out / MEMBERS_FILE).write_text(json.dumps({"members": record, "float16": half},
                                               indent=2) + "\n")
    return out
