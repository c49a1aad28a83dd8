"""A pre-training run's specification: every setting that makes two runs different runs,
torch-free (the CLI builds its flags from it while ``--help`` stays instant)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

SAMPLINGS = ("uniform", "task")
# what the head predicts: one output per corpus endpoint, or per quantity of the shared map
# with an offset per source (quantity_head.py)
TARGETS = ("endpoints", "quantities")
# the fields `graphnorm pretrain` sets with a flag of the same name (--num-layers ...); the
# others have flags of their own shape (--descriptors, --train-every-task, --keep-tdc, --corpora)
FLAG_FIELDS = ("norm", "num_layers", "hidden", "ffn_hidden", "batch_size", "lr", "warmup_steps",
               "weight_decay", "weighting", "sampling", "seed", "val_percent", "targets")


@dataclass(frozen=True)
class PretrainSpec:
    norm: str = "sep:bn+bn"
    num_layers: int = 4
    hidden: int = 64
    ffn_hidden: int = 128
    batch_size: int = 128
    lr: float = 5e-4
    warmup_steps: int = 1000
    weight_decay: float = 0.01
    clip_norm: float = 5.0
    weighting: str = "molecule"  # objective.WEIGHTINGS
    # how an epoch draws its molecules: "uniform" (a permutation) or "task" (square-root task
    # balancing, drawn with replacement: setup.task_balanced_weights)
    sampling: str = "uniform"
    # RDKit descriptors at the head (chem/descriptors.py: False, "fast" or True): the corpus is
    # featurized with them (another cache) and the model standardizes them on its training
    # molecules; False is the backbone that fine-tuning adds descriptors to
    descriptors: bool | str = False
    exclude_tdc: bool = True  # drop every TDC ADMET molecule (train_val and test): splits.py
    # the product build (issue 68): the 22 TDC ADMET tables, test rows too, join the corpus
    # (corpus.tdc_table); such a model is never a TDC entry nor a `train` start
    tdc_tables: bool = False
    corpora: Optional[tuple] = None  # None: every corpus of admet_corpus
    # corpus tasks ("<corpus>/<column>") whose labels the run never reads: the leave-source-out
    # yardstick builds without one source of a quantity and scores its molecules zero-shot
    leave_out: Optional[tuple] = None
    seed: int = 0
    # of scaffold groups held out (splits.scaffold_holdout); 0: none, every row trained (a
    # refit of a run whose choices were made on its held-out molecules)
    val_percent: int = 5
    # one task per multi-task corpus never trained, for the probe (splits.held_out_tasks);
    # False trains every task: the shipped model, whose every endpoint needs a head
    held_out_tasks: bool = True
    val_max: int = 8000  # held-out molecules scored at each evaluation (a fixed sample)
    targets: str = "endpoints"  # TARGETS
    # a warm start: the checkpoint whose weights start the run (`--init-from`), and the steps
    # it was trained, where the learning-rate schedule goes on from (graphnorm.train.schedule.lr_at)
    init_from: Optional[str] = None
    schedule_offset: int = 0

    def __post_init__(self):
        for name in ("corpora", "leave_out"):  # tuples: a spec is hashable, lists compare equal
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.tdc_tables and self.exclude_tdc:
            raise ValueError("the TDC tables hold every TDC molecule: a run that reads them "
                             "keeps TDC molecules (--keep-tdc)")
        if not 0 <= self.val_percent < 100:
            raise ValueError(f"val_percent must be in [0, 100), got {self.val_percent} (0: "
                             "nothing held out, every row trained)")
        if self.targets not in TARGETS:
            raise ValueError(f"targets must be one of {TARGETS}, got {self.targets!r}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["corpora"] = list(self.corpora) if self.corpora else None
        d["leave_out"] = list(self.leave_out) if self.leave_out else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PretrainSpec":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown pre-training settings {unknown}; known: {sorted(known)}")
        d = dict(d)
        for name in ("corpora", "leave_out"):
            if d.get(name):
                d[name] = tuple(d[name])
        return cls(**d)
