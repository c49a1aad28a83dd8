"""Training configuration: one dataclass, filled from YAML and command-line overrides. Each field
is a `setting` (train/config_schema.py): its block and help, from which the training flags
(train/cli.py), the block views and config files nested by block follow."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Optional

import yaml

from graphnorm.data.info import DATASET_INFO, METRICS, TASK_CHOICES
from graphnorm.graph.options import LOCAL_MP, READOUTS, SEP_SLOTS
from graphnorm.models import PRESETS, RUNNABLE_MODELS, TREE_MODELS, presets_help
from graphnorm.tasks import REGRESSION

from .config_keys import (OLD_KEYS, RENAMED_KEYS, fold_flat_featurizer_keys,  # noqa: F401
                          fold_old_keys, fold_renamed_keys, parse_duration)
from .config_schema import block_view, blocks_of, setting, unnest_blocks
from .recipes import RECIPE_NAMES


# frozen: a resolved config is never edited; runs derived from it are new configs (train/plan.py)
@dataclass(frozen=True)
class TrainConfig:
    dataset: str = setting("zinc-subset", "data", "a benchmark dataset (your own table: --data)",
                           choices=lambda: list(DATASET_INFO))
    raw_dir: Optional[str] = setting(None, "data", "offline raw data (default: $GRAPHNORM_RAW_DIR)")
    cache_root: Optional[str] = setting(None, "data", "where featurized data is cached (default: "
                                        "$GRAPHNORM_CACHE, else data/cache of the checkout)")
    featurizer: dict = setting(block="data", factory=dict, flag=False, help=(
        "featurizer settings other than the vocabulary, which follows the dataset: max_hops, "
        "max_dist, fingerprint_bits, descriptors; they key the data cache and size the model"))
    limit_train: Optional[int] = setting(None, "data", "use the first N training graphs")
    limit_eval: Optional[int] = setting(None, "data", "use the first N validation and test graphs")
    # own data (graphnorm/data/table_dataset.py): a table file replaces `dataset`
    data: Optional[str] = setting(None, "data", "table of molecules: .csv, .tsv, .smi, .sdf, "
                                  ".parquet")
    smiles_column: Optional[str] = setting(None, "data", "SMILES column (default: the column "
                                           "named 'smiles')")
    target_columns: Optional[list] = setting(
        None, "data", "target columns, one model output each (default: every other numeric "
        "column)", nargs="+", metavar="COLUMN")
    task: str = setting("auto", "data", "auto (default): classification when every label is 0 "
                        "or 1, else regression; classification: 0/1 labels, ROC-AUC",
                        choices=lambda: list(TASK_CHOICES))
    split: str = setting("scaffold", "data", "scaffold, random, column:NAME (train/val/test per "
                         "row), file:RUN/splits.json (a previous run's split) or tdc:NAME (NAME "
                         "says test for the fixed test rows; the rest gets PyTDC's scaffold split)")
    # None: rmse or rocauc by the task; also mae, spearman, auprc (graphnorm/tasks)
    metric: Optional[str] = setting(None, "data", "picks the checkpoint and is reported "
                                    "(default: rmse for regression, rocauc for classification)",
                                    choices=lambda: list(METRICS))
    split_sizes: Any = setting("0.8,0.1,0.1", "data", "train,val,test fractions")
    # apart from `seed`: ensemble members share a split
    split_seed: int = setting(0, "data", "seed of the scaffold/random split (apart from --seed)")
    ensemble: int = setting(1, "ensemble", "train N models (seeds SEED..SEED+N-1, one split) into "
                            "OUT/model_<k>; predict on OUT averages them and adds <target>_std",
                            commands=("train", "benchmark"), help_for={"benchmark": (
                                "each run is an ensemble of N models (seeds k..k+N-1 on the "
                                "run's split, trained one after another), scored by their mean "
                                "prediction")})
    # out/forest (rf) or out/gbm; before issue 57: forest_member, still read (`fold_old_keys`)
    tree_member: bool = setting(False, "ensemble", "add a tree model (--tree-model) as one more "
                                "ensemble member; predict averages it in. Default: on under the "
                                "small-table recipe (classification: rf; regression: gbm) and the "
                                "admet recipe (gbm), off otherwise")
    # | a registered tree kind (graphnorm.models; before issue 57: forest_model)
    tree_model: str = setting("rf", "ensemble", "the tree model of --tree-member: rf (the "
                              "Morgan-count random forest, OUT/forest) or gbm (LightGBM on "
                              "MapLight features, OUT/gbm)", choices=lambda: list(TREE_MODELS))
    # feature sets: graphnorm.chem.tabular
    tree_features: Optional[str] = setting(
        None, "ensemble", "what the tree model reads (--model rf|gbm, or the tree member): "
        "default its own set (rf: morgan, gbm: maplight); gbm also reads maplight+admet, MapLight "
        "plus 9 measured properties predicted by boosters shipped with graphnorm "
        "(graphnorm/pretrained/README.md), and maplight+gnn / maplight+admet+gnn, plus a "
        "pre-trained Graphormer's embedding and task outputs (--feature-backbone)", metavar="SET")
    # benchmark --suite tdc-admet sets the leave-own-task-out file on the 8 large tasks
    admet_boosters: Optional[str] = setting(
        None, "ensemble", "maplight+admet: read this boosters file instead of the shipped one "
        "(same format; the run keeps a copy, which predict reads)", metavar="FILE")
    # graphnorm/baselines/gnn_features.py
    feature_backbone: Optional[str] = setting(
        None, "ensemble", "maplight+gnn, maplight+admet+gnn: the pre-trained Graphormer whose "
        "[VNode] embedding and task outputs the trees read (a `graphnorm pretrain` checkpoint; "
        "the run keeps a copy, which predict reads)", metavar="CKPT")
    # its validation scores stay the train-only fit's
    tree_refit: bool = setting(False, "ensemble", "fit the tree model (--model rf|gbm, or the "
                               "tree member) once more on train + validation after validation "
                               "is scored; the saved model and the test scores come from that "
                               "fit (nothing of a tree model is chosen on validation). Default: "
                               "on under --recipe admet, off otherwise")
    # graphnorm/train/member_weights.py
    tree_weight: str = setting(
        "equal", "ensemble", "the tree member's weight in the ensemble mean: equal (one member "
        "like the others), val (chosen on the validation split, graph members share the rest), a "
        "fixed weight W in [0, 1], or val:W / val:equal (W, or one member's share, unless "
        "validation prefers another weight by more than one bootstrap standard error). Default: "
        "val:equal for regression tables under the small-table recipe, equal otherwise",
        metavar="{equal,val,W,val:W,val:equal}")
    # graphnorm/ensemble/averaging.py
    member_average: str = setting(
        "mean", "ensemble", "how an ensemble averages its members on a classification task: mean "
        "of the probabilities, or logodds (the mean log-odds: a confident member weighs more). "
        "Regression always takes the mean. Default: logodds under --recipe admet, mean otherwise",
        choices=["mean", "logodds"])
    bucket_pool: int = setting(4, "optimization", "training batches are cut from size-sorted "
                               "pools of this many batches (less padding)")
    # size-bucketed batches skew the moving averages
    recalibrate_batches: int = setting(8, "optimization", "before each validation, BatchNorm "
                                       "statistics from this many random training batches "
                                       "(default 8; 0 keeps the moving averages)")
    # training: their union, no extra pass; with ema_decay random (the averaged weights did
    # not run those batches)
    recalibrate_source: str = setting(
        "random", "optimization", "those batches: random ones run for it (default), or the last "
        "training batches' own statistics (no extra forward passes; BatchNorm only)",
        flag="--recalibrate-from", choices=["random", "training"])
    model_name: str = setting(
        "graphormer", "architecture", "graphormer (default), a PyG baseline: gine, gin-vn, or "
        "(own tables) a tree model: rf (random forest on Morgan counts), gbm (LightGBM on "
        "MapLight features: ECFP + Avalon counts, ErG, RDKit descriptors)", flag="--model",
        choices=lambda: list(RUNNABLE_MODELS))
    preset: Optional[str] = setting(
        None, "architecture", lambda: "model size (default: the recipe's, i.e. fast for the "
        "Graphormer of --recipe auto; a config file without recipe: slim for the Graphormer, "
        f"base for GNNs): {presets_help(mark_default=False)}",
        choices=lambda: sorted({p for table in PRESETS.values() for p in table}))
    model: dict = setting(block="architecture", factory=dict, flag=False, help=(
        "overrides of the model config's fields (e.g. num_layers, hidden), checked against the "
        "model kind's config class"))
    readout: Optional[str] = setting(None, "architecture", "graphormer head input (default "
                                     "vnode); GNNs: sum or mean pooling",
                                     choices=lambda: list(READOUTS))
    rwpe_steps: Optional[int] = setting(None, "architecture", "graphormer: random-walk PE with "
                                        "this many steps (default 0 = off)")
    local_mp: Optional[str] = setting(None, "architecture", "graphormer: GINE message passing "
                                      "beside attention in every block",
                                      choices=lambda: list(LOCAL_MP))
    norm: str = setting("sep:bn+ln", "architecture", "norm spec, e.g. ln, sep:bn+ln, isobn (see "
                        "graphnorm.norms)")
    sep_slots: str = setting("all", "architecture", "graphormer: the norm slots that get --norm "
                             "(all, the final norm, or the blocks'); the others get ln",
                             choices=lambda: list(SEP_SLOTS))
    dropout: float = setting(0.1, "architecture", "dropout of the model's layers")
    attention_dropout: float = setting(0.1, "architecture", "dropout on the attention weights")
    # Graphormer v1 recipe: AdamW, warm-up then linear decay, L1 for ZINC
    batch_size: int = setting(256, "optimization", "molecules per batch (per process under DDP)")
    lr: float = setting(2e-4, "optimization", "peak learning rate (AdamW)")
    end_lr: float = setting(1e-9, "optimization", "learning rate at the end of the linear decay",
                            flag=False)
    # graphnorm/train/module.py: param_groups (the head side: init_from.HEAD_SIDE)
    backbone_lr: float = setting(1.0, "optimization", "fine-tuning (--init-from): the copied "
                                 "weights' learning rate as a share of --lr (0: frozen)")
    weight_decay: float = setting(0.01, "optimization", "AdamW weight decay (nn.Linear weights "
                                  "only)", flag=False)
    warmup_steps: Optional[int] = setting(None, "optimization", "warm-up steps (default: "
                                          "warmup_fraction of the run)", flag=False)
    warmup_fraction: float = setting(0.06, "optimization", "warm-up share of the run when "
                                     "warmup_steps is not set", flag=False)
    total_steps: Optional[int] = setting(None, "optimization", "the schedule's length in steps "
                                         "(default: max_epochs x steps per epoch)", flag=False)
    grad_clip: float = setting(5.0, "optimization", "gradient norm clipping", flag=False)
    # skewness > 2: half-life in hours, volumes, clearances; as the boosted trees do
    target_transform: str = setting("auto", "optimization", "auto (default): fit positive, "
                                    "right-skewed regression targets in log10 units, predict in "
                                    "yours; none: raw units", choices=["auto", "none"])
    loss: str = setting("l1", "optimization", "regression loss on standardized targets: l1 "
                        "(MAE) or mse (RMSE)", choices=lambda: list(REGRESSION.losses))
    # Lightning's EMAWeightAveraging
    ema_decay: Optional[float] = setting(
        None, "optimization", "keep an exponential moving average of the weights (e.g. 0.999 per "
        "step); validation, checkpoints and predictions use it (default: off)")
    # None: 200, or no limit when max_time is set
    max_epochs: Optional[int] = setting(
        None, "optimization", "epoch limit; -1 lifts a config's limit, so that the time budget "
        "alone ends the run (the learning rate follows that budget)")
    # the epoch limit becomes ceil(max_steps / batches per epoch), so a recipe's training
    # length does not grow or shrink with the table
    max_steps: Optional[int] = setting(
        None, "optimization", "optimizer steps (epochs = steps / batches per epoch); with "
        "--max-epochs too, the lower limit ends the run; ignored with --max-time")
    # TDC: 400 steps are 3 epochs of cyp3a4_veith, best at the last; the longer budget trains
    min_epochs: Optional[int] = setting(
        None, "optimization", "with --max-steps: train at least this many epochs, so large "
        "tables get more steps (small-table recipe: 15)")
    # validating every epoch cost as much as training on TDC dili (6 steps/epoch); each
    # validation recalibrates BN and writes best/last.ckpt
    val_every_steps: Optional[int] = setting(
        None, "optimization", "validate about every N optimizer steps (whole epochs) instead of "
        "every epoch: cheaper on small tables")
    # Lightning's EarlyStopping on the validation metric; a share is rounded, at least 1. The
    # learning-rate schedule still spans the budget, so a run that does not stop is unchanged
    patience: Optional[float] = setting(
        None, "optimization", "stop after N validations in a row without a better validation "
        "score; below 1, that share of the run's validations (default: train the whole budget; "
        "admet recipe on small tables: 0.3)")
    # e.g. to study when to stop (the study: experiments/tdc_stopping.py at commit ff74c75)
    keep_checkpoints: bool = setting(False, "runtime", "also keep every validation's checkpoint "
                                     "in OUT/checkpoints/", const=True)
    # graphnorm/train/val_trace.py; cross-fitted by graphnorm/bench/crossfit.py
    trace_validation: bool = setting(False, "runtime", "record every validation's predictions in "
                                     "OUT/val_trace.npz (for a cross-fitted validation score)",
                                     const=True)
    recipe: Optional[str] = setting(
        None, "optimization", "named training recipe under the flags: auto (default without "
        "--config: admet for --data, molhiv-fast, cpu-fast for ZINC), slim (the paper's "
        "GPU recipe), ... (graphnorm/train/recipes.py)", choices=lambda: list(RECIPE_NAMES))
    max_time: Optional[str] = setting(None, "optimization", "wall-time budget of the whole run, "
                                      "e.g. 25m, 1h30m, 90s; the LR schedule spans it")
    # graphnorm/train/init_from.py
    init_from: Optional[str] = setting(
        None, "architecture", "fine-tune: start from this checkpoint's weights (all but the "
        "head), or from a backbone shipped with graphnorm by name (admet: pre-trained on "
        "measured ADMET tables without any TDC molecule, --recipe admet's default start; "
        "admet-panel: the ADMET panel's model; zinc250k: the small-table recipe's model; RDKit "
        "descriptors may then be added at the head); none: from scratch (for data unlike "
        "measured ADMET/drug-like molecules, or to compare); "
        "same model and featurizer settings. benchmark: {variant} in the path becomes each run's "
        "variant folder, e.g. pre/runs/{variant}/seed0")
    panel_column: Optional[str] = setting(  # no flag: a panel build's step, not a user's
        None, "architecture", "the ADMET panel's quantity (e.g. logd74) this run fits as a "
        "panel column: it may start from a product build (which read every TDC table), never "
        "a TDC entry", flag=False)
    uniformity_weight: float = setting(0.0, "optimization", "lambda of the uniformity term on "
                                       "[VNode] embeddings (seed paper Eq. 8)")
    uniformity_on_tokens: bool = setting(False, "optimization", "the uniformity term also on the "
                                         "atom tokens", flag=False)
    bucket_by_size: bool = setting(
        True, "optimization", "training batches of random molecules, not size-sorted (more "
        "padding, slower; BatchNorm then sees every size in each batch)", flag="--random-batches",
        const=False)
    seed: int = setting(0, "runtime", "model seed", commands=("train", "hpopt"),
                        help_for={"hpopt": "model seed of every trial"})
    out: str = setting("runs/default", "runtime", "run directory (checkpoints, logs, "
                       "metrics.json)", commands=("train",))
    resume: bool = setting(False, "runtime", "continue from OUT/last.ckpt", commands=("train",),
                           const=True)
    accelerator: str = setting("auto", "runtime", "auto (default: GPU if any), cpu, gpu, ...")
    devices: int = setting(1, "runtime", "devices (processes) Lightning trains on")
    strategy: str = setting("auto", "runtime", "Lightning's strategy, e.g. ddp")
    num_workers: Optional[int] = setting(
        None, "runtime", "DataLoader worker processes that pad batches (default: none on the CPU, "
        "min(8, cores - 1) when a GPU trains)")
    checkpoint_every_n_steps: int = setting(50, "runtime", "write OUT/last.ckpt every this many "
                                            "steps", flag="--checkpoint-every")
    progress: bool = setting(True, "runtime", "no progress bar", flag="--no-progress", const=False)
    threads: Optional[int] = setting(None, "runtime", "CPU threads per run (default: one per core)")

    def __post_init__(self):
        if self.ema_decay is not None and not 0.0 < self.ema_decay < 1.0:
            raise ValueError(f"ema_decay must lie in (0, 1), e.g. 0.999; got {self.ema_decay}")
        if self.max_time is not None:
            parse_duration(self.max_time)  # a bad budget fails before any work
        if self.max_epochs is not None and self.max_epochs != -1 and self.max_epochs < 1:
            raise ValueError(f"max_epochs must be >= 1 (or -1: no epoch limit under "
                             f"--max-time); got {self.max_epochs}")
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

    @classmethod
    def blocks(cls) -> dict[str, tuple[str, ...]]:
        """block -> the names of its settings (data, architecture, optimization, ensemble,
        runtime; graphnorm/train/config_schema.py)."""
        return blocks_of(cls)

    def block(self, name: str):
        """This config's settings of block ``name`` as a frozen dataclass of their own, e.g.
        ``cfg.block("optimization").lr``."""
        return block_view(self, name)

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
    """A config file's settings as a flat mapping: given flat (``lr: 0.001``) or nested by block
    (``optimization: {lr: 0.001}``; `unnest_blocks`); clear errors naming the file for a
    missing file, another YAML shape, a setting under the wrong block or an unknown one, and
    a setting given flat and nested with different values. Earlier key names stay flat and
    are folded later (`fold_old_keys`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping, got {type(data).__name__}")
    return unnest_blocks(data, TrainConfig.blocks(), str(path), OLD_KEYS)
