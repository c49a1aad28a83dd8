"""Training configuration: one dataclass, filled from YAML and command-line overrides."""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

import yaml


# frozen: a resolved config is never edited; the runs derived from it (ensemble members,
# benchmark runs, hpopt trials, suite tasks) are planned as new configs in train/plan.py
@dataclass(frozen=True)
class TrainConfig:
    # data
    dataset: str = "zinc-subset"
    raw_dir: Optional[str] = None
    cache_root: Optional[str] = None
    # FeaturizerConfig fields other than the vocab (which follows the dataset): max_hops,
    # max_dist, fingerprint_bits; they key the data cache and size the model (chem/config.py)
    featurizer: dict = field(default_factory=dict)
    limit_train: Optional[int] = None  # use the first N training graphs (smoke tests)
    limit_eval: Optional[int] = None
    # own data (graphnorm/data/table_dataset.py): a table file replaces `dataset`
    data: Optional[str] = None  # .csv/.tsv/.smi/.sdf/.parquet with SMILES and targets
    smiles_column: Optional[str] = None  # default: the column named "smiles"
    target_columns: Optional[list] = None  # default: every other column
    task: str = "auto"  # regression | classification (0/1 labels) | auto: by the labels
    split: str = "scaffold"  # scaffold | random | column:NAME | file:splits.json | tdc:COLUMN
    metric: Optional[str] = None  # a table's model-selection and reported metric; None: rmse
    # (regression) or rocauc (classification); also mae, spearman, auprc (graphnorm/tasks)
    split_sizes: Any = "0.8,0.1,0.1"
    split_seed: int = 0  # the split's seed, apart from `seed`: ensemble members share a split
    ensemble: int = 1  # models (seeds seed..seed+N-1) trained into out/model_<k>
    tree_member: bool = False  # one more ensemble member: a tree model (a user table), by
    # default the Morgan-count forest (--model rf) in out/forest; the ensemble predicts the
    # mean of all members (before issue 57: forest_member, still read: `fold_old_keys`)
    tree_model: str = "rf"  # the tree model of that member: rf (out/forest) | gbm (out/gbm)
    # | a registered tree kind (graphnorm.models; before issue 57: forest_model)
    tree_features: Optional[str] = None  # a tree kind's input (graphnorm.chem.tabular); None:
    # the kind's own (rf: morgan, gbm: maplight); gbm also reads maplight+admet
    admet_boosters: Optional[str] = None  # that set's boosters file; None: the shipped one
    # (benchmark --suite tdc-admet sets the leave-own-task-out file on the 8 large tasks)
    feature_backbone: Optional[str] = None  # the +gnn sets' pre-trained Graphormer (a
    # `graphnorm pretrain` checkpoint; graphnorm/baselines/gnn_features.py)
    tree_refit: bool = False  # a tree model (--model rf|gbm, or the tree member), once
    # validation is scored, fitted again on train + validation: the saved model and its test
    # predictions see those rows too; its validation scores stay the train-only fit's
    tree_weight: str = "equal"  # that member's weight in the mean: equal (one member like the
    # others) | val (chosen on the validation split from 0, 0.1, ..., 1; graph members share the
    # rest) | a fixed weight such as 0.7 | val:0.7 or val:equal (fitted, but 0.7 or one member's
    # share unless the fit is better by more than one bootstrap standard error;
    # graphnorm/train/member_weights.py)
    member_average: str = "mean"  # how an ensemble averages its members: mean (user units) |
    # logodds (classification: the mean log-odds; regression stays mean; graphnorm/ensemble/averaging.py)
    bucket_pool: int = 4  # size-sorted pools of this many batches (see LengthBucketSampler)
    recalibrate_batches: int = 8  # BN/IsoBN statistics from this many random batches before
    # each validation (size-bucketed batches skew them; 0 = keep the moving averages)
    recalibrate_source: str = "random"  # random: that many extra forward passes | training:
    # the union of the last that many training batches, no extra pass (BatchNorm only; with
    # ema_decay random, since the averaged weights did not run those batches)
    # model: graphormer (Graphormer-slim by default) or a PyG baseline, see graphnorm.models
    model_name: str = "graphormer"  # --model graphormer | gine | gin-vn
    preset: Optional[str] = None  # None: the model's default (graphormer: slim, GNNs: base)
    model: dict = field(default_factory=dict)  # overrides of the model config's fields
    readout: Optional[str] = None  # graphormer: vnode | sum | mean | vnode+sum | vnode+mean
    rwpe_steps: Optional[int] = None  # graphormer: random-walk PE steps (0 = off)
    local_mp: Optional[str] = None  # graphormer: none | gine (GraphGPS-style local branch)
    norm: str = "sep:bn+ln"
    sep_slots: str = "all"
    dropout: float = 0.1
    attention_dropout: float = 0.1
    # optimisation (Graphormer v1 recipe: AdamW, warm-up then linear decay, L1 for ZINC)
    batch_size: int = 256
    lr: float = 2e-4
    end_lr: float = 1e-9
    weight_decay: float = 0.01
    warmup_steps: Optional[int] = None
    warmup_fraction: float = 0.06  # used when warmup_steps is None
    total_steps: Optional[int] = None  # None: max_epochs x steps per epoch
    grad_clip: float = 5.0
    # "auto": a positive, right-skewed regression target (skewness > 2: half-life in hours,
    # volumes, clearances) is fitted in log10 units and predicted in the user's, as the
    # boosted trees do; "none": raw units
    target_transform: str = "auto"
    loss: str = "l1"  # regression: "l1" (the ZINC benchmarks' MAE) or "mse" (for RMSE)
    ema_decay: Optional[float] = None  # EMA of the weights (Lightning's EMAWeightAveraging),
    # updated every step; validation, best.ckpt and predictions use the average
    max_epochs: Optional[int] = None  # None: 200, or no limit when max_time is set; -1: none
    # optimizer steps, when max_epochs is None: the epoch limit becomes ceil(max_steps / batches
    # per epoch), so a recipe's training length does not grow or shrink with the table
    max_steps: Optional[int] = None
    # with max_steps: at least this many epochs, so a large table is not cut short by a step
    # budget measured on small ones (TDC: 400 steps are 3 epochs of cyp3a4_veith, best at the
    # last); the longer of the two budgets trains
    min_epochs: Optional[int] = None
    # validate (and recalibrate BN, write best/last.ckpt) about every this many optimizer
    # steps instead of every epoch: on a table of a few hundred molecules an epoch is a few
    # steps, and validating every epoch cost as much as training (TDC dili, 6 steps/epoch)
    val_every_steps: Optional[int] = None
    # stop after this many validations in a row without a better score (Lightning's
    # EarlyStopping on the validation metric); below 1: that share of the run's validations
    # (rounded, at least 1: a longer schedule waits longer); None: train the whole budget. The
    # learning-rate schedule still spans the budget, so a run that does not stop is unchanged
    patience: Optional[float] = None
    # also keep every validation's checkpoint (OUT/checkpoints/step=<k>.ckpt), e.g. to study
    # when to stop (experiments/tdc_stopping.py)
    keep_checkpoints: bool = False
    # record every validation's predictions (OUT/val_trace.npz, graphnorm/train/val_trace.py),
    # so that a choice made on validation can be cross-fitted (graphnorm/bench/crossfit.py)
    trace_validation: bool = False
    recipe: Optional[str] = None  # the named recipe under these values (train/recipes.py)
    max_time: Optional[str] = None  # wall-time budget of the whole run, e.g. "25m", "1h30m"
    init_from: Optional[str] = None  # fine-tune: start from this checkpoint's weights, all but
    # the head (graphnorm/train/init_from.py); benchmark: "{variant}" becomes each run's variant
    uniformity_weight: float = 0.0  # lambda of the U-MAE style term on [VNode] (seed paper Eq. 8)
    uniformity_on_tokens: bool = False
    bucket_by_size: bool = True
    # run
    seed: int = 0
    out: str = "runs/default"
    resume: bool = False
    accelerator: str = "auto"  # Lightning: a GPU when there is one, else CPU
    devices: int = 1
    strategy: str = "auto"
    num_workers: Optional[int] = None  # DataLoader workers; None: `loader_workers` decides
    checkpoint_every_n_steps: int = 50  # also writes last.ckpt mid-epoch, for --resume
    progress: bool = True
    threads: Optional[int] = None

    def __post_init__(self):
        if self.ema_decay is not None and not 0.0 < self.ema_decay < 1.0:
            raise ValueError(f"ema_decay must lie in (0, 1), e.g. 0.999; got {self.ema_decay}")
        if self.max_time is not None:
            parse_duration(self.max_time)  # a bad budget fails before any work
        if self.max_epochs is not None and self.max_epochs != -1 and self.max_epochs < 1:
            raise ValueError(f"max_epochs must be >= 1 (or -1: no epoch limit under "
                             f"--max-time); got {self.max_epochs}")
        from graphnorm.tasks import REGRESSION

        if self.loss not in REGRESSION.losses:
            raise ValueError(f"loss must be {' or '.join(REGRESSION.losses)}, got {self.loss!r}")
        if self.target_transform not in ("auto", "none"):
            raise ValueError(f"target_transform must be auto or none, got {self.target_transform!r}")
        from graphnorm.train.member_weights import tree_weight_rule

        tree_weight_rule(self.tree_weight)  # raises, naming the value
        from graphnorm.ensemble.averaging import check_average

        check_average(self.member_average)
        if self.recalibrate_source not in ("random", "training"):
            raise ValueError(f"recalibrate_source must be random or training, "
                             f"got {self.recalibrate_source!r}")
        if self.val_every_steps is not None and self.val_every_steps < 1:
            raise ValueError(f"val_every_steps must be >= 1, got {self.val_every_steps}")
        if self.patience is not None and (self.patience <= 0 or not (
                self.patience < 1 or float(self.patience).is_integer())):
            raise ValueError(f"patience must be a number of validations (1, 2, ...) or a share of "
                             f"them between 0 and 1, got {self.patience}")
        if self.num_workers is not None and self.num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {self.num_workers}")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.min_epochs is not None and self.min_epochs < 1:
            raise ValueError(f"min_epochs must be >= 1, got {self.min_epochs}")
        if self.max_epochs == -1 and not self.max_time:
            raise ValueError("max_epochs -1 (no epoch limit) needs a time budget (--max-time)")

    def patience_validations(self, steps_per_epoch: int) -> Optional[int]:
        """``patience`` in validations for data with ``steps_per_epoch`` batches (a share
        counts the validations of the epoch limit); None: no early stopping, also for a share
        under a time budget alone, whose number of validations is not known (``train`` warns)."""
        if self.patience is None:
            return None
        if self.patience >= 1:
            return int(self.patience)
        if self.epochs_limit < 1:
            return None
        validations = self.epochs_limit // self.val_every_epochs(steps_per_epoch)
        return max(1, round(self.patience * validations))

    def val_every_epochs(self, steps_per_epoch: int) -> int:
        """Lightning's ``check_val_every_n_epoch``: ``val_every_steps`` in whole epochs (1 when
        unset, or when an epoch is longer than the interval)."""
        if not self.val_every_steps:
            return 1
        return max(1, round(self.val_every_steps / max(1, steps_per_epoch)))

    def loader_workers(self) -> int:
        """DataLoader worker processes: ``num_workers`` when set; else none on the CPU (the
        cores train) and min(8, cores - 1) when a GPU trains: padding one batch costs the
        CPU 125-275 ms, longer than a GPU step (experiments/results/gpu/README.md)."""
        if self.num_workers is not None:
            return self.num_workers
        import torch  # here: the config (and the CLI parser) loads without torch

        gpu = self.accelerator in ("gpu", "cuda") or (self.accelerator == "auto"
                                                       and torch.cuda.is_available())
        return min(8, max(0, (os.cpu_count() or 1) - 1)) if gpu else 0

    def budget_warning(self) -> Optional[str]:
        """Why an epoch limit beside a time budget misleads (None if it does not apply);
        ``train`` warns with it once per run."""
        if not self.max_time or self.max_epochs in (None, -1):
            return None
        return (f"max_epochs={self.max_epochs} and max_time={self.max_time} are both set: the "
                f"learning rate follows the time budget, so a run that reaches {self.max_epochs} "
                f"epochs first stops before its learning rate has decayed. To train for the "
                f"time alone, pass --max-epochs -1 (e.g. with a config that sets max_epochs).")

    @property
    def epochs_limit(self) -> int:
        """Lightning's max_epochs: the given value, else 200, or unlimited (-1) under a time budget."""
        if self.max_epochs is not None:
            return self.max_epochs
        return -1 if self.max_time else 200

    @property
    def is_ensemble(self) -> bool:
        """Several members (seeds, or a model and its tree member) in out/model_<k> (and
        out/forest, out/gbm): trained by graphnorm/train/ensemble.py, not as one run."""
        return self.ensemble > 1 or self.tree_member

    @property
    def budget_s(self) -> Optional[float]:
        return None if self.max_time is None else parse_duration(self.max_time)

    def featurizer_config(self, vocab: str):
        """The FeaturizerConfig of this run's data (``vocab``: the dataset's)."""
        from graphnorm.chem import FeaturizerConfig

        settings = dict(self.featurizer or {})  # YAML `featurizer:` with nothing under it
        if settings.get("vocab", vocab) != vocab:
            raise ValueError(f"featurizer vocab {settings['vocab']!r} conflicts with the "
                             f"data's vocab {vocab!r}; leave it out (the dataset decides it)")
        if "version" in settings:
            raise ValueError("featurizer version is the code's, not a setting; leave it out")
        return FeaturizerConfig.from_dict(dict(settings, vocab=vocab))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        """A config from its keys: a config file's, or one a run stored (metrics.json and
        ensemble.json ``config``, a checkpoint's train config); earlier names of keys are read
        as today's (`fold_old_keys`)."""
        data = fold_old_keys(data)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; valid keys: {sorted(known)}")
        return cls(**data)


def read_yaml(path: str | Path) -> dict:
    """A config file's mapping; clear errors for a missing file or another YAML shape."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping, got {type(data).__name__}")
    return data


# keys renamed since runs and config files were written: old name -> the field it now is
# (issue 57: a gbm member is not a forest; the tree member's names match tree_features,
# tree_weight, tree_refit)
RENAMED_KEYS = {"forest_member": "tree_member", "forest_model": "tree_model"}


def fold_old_keys(data: dict) -> dict:
    """``data`` with the keys of older configs (YAML files, the config stored in a
    metrics.json, ensemble.json or checkpoint) read as today's: top-level max_hops/max_dist
    (`fold_flat_featurizer_keys`) and the renamed keys of `RENAMED_KEYS`. A key given under
    both names with different values is an error naming both."""
    return fold_renamed_keys(fold_flat_featurizer_keys(data))


def fold_renamed_keys(data: dict) -> dict:
    """``data`` with each old key of `RENAMED_KEYS` under its new name (forest_member ->
    tree_member, forest_model -> tree_model); both names with different values: ValueError."""
    old = [k for k in RENAMED_KEYS if k in data]
    if not old:
        return data
    out = {k: v for k, v in data.items() if k not in RENAMED_KEYS}
    for key in old:
        new, value = RENAMED_KEYS[key], data[key]
        if new in data and data[new] != value:
            raise ValueError(f"{key} and {new} are one setting ({key} is its earlier name) and "
                             f"are given different values: {key}: {value!r}, {new}: "
                             f"{data[new]!r}; keep {new} only")
        out[new] = value
    return out


def fold_flat_featurizer_keys(data: dict) -> dict:
    """Configs before `featurizer:` (YAML files, metrics.json) had top-level max_hops /
    max_dist; they mean the same featurizer setting."""
    flat = {k: data[k] for k in ("max_hops", "max_dist") if k in data}
    if not flat:
        return data
    nested = dict(data.get("featurizer") or {})
    for k, v in flat.items():
        if k in nested and nested[k] != v:
            raise ValueError(f"{k} is given twice: {k}: {v} and featurizer: {{{k}: {nested[k]}}}")
        nested[k] = v
    return dict({k: v for k, v in data.items() if k not in flat}, featurizer=nested)


_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text) -> float:
    """Seconds of a budget written as "25m", "1h30m", "90s", "1.5h", "2d" or "HH:MM:SS"."""
    raw = str(text).strip().lower()
    if re.fullmatch(r"\d+:\d{1,2}:\d{1,2}", raw):
        h, m, s = (int(v) for v in raw.split(":"))
        seconds = h * 3600 + m * 60 + s
    elif re.fullmatch(r"(\d+(\.\d+)?[dhms])+", raw):
        seconds = sum(float(v) * _UNITS[u] for v, u in re.findall(r"(\d+(?:\.\d+)?)([dhms])", raw))
    else:
        raise ValueError(f"--max-time (max_time) {text!r} is not a duration; write e.g. 25m, 1h30m, 90s or 01:30:00")
    if seconds <= 0:
        raise ValueError(f"--max-time (max_time) {text!r} must be positive")
    return seconds
