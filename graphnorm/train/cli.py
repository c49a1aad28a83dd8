"""The training flags (shared by ``train``, ``benchmark`` and ``hpopt``) and how they feed
TrainConfig: the argparse side of config resolution (graphnorm/train/resolve.py).

Which flags are config values is derived, not listed: a flag whose dest is a TrainConfig field
sets that field; a flag that sets one key of a dict block (``featurizer``, ``model``) says so
where it is added (`adder`), and so does a flag of the command itself.
`config_dests` refuses any other flag, so a new one cannot be dropped on its way to the
config. Here, beside inference/cli.py and explain/cli.py, because the flags are the training
package's; graphnorm/cli.py wires the commands. Torch-free: ``graphnorm --help`` stays instant.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import Callable, Optional

from graphnorm.data.info import DATASET_INFO, METRICS, TASK_CHOICES
from graphnorm.graph.options import FINGERPRINT_AT, LOCAL_MP, READOUTS, SEP_SLOTS
from graphnorm.models import PRESETS, RUNNABLE_MODELS, TREE_MODELS, presets_help
from graphnorm.tasks import REGRESSION
from graphnorm.train.recipes import RECIPE_NAMES, print_note


def add_train_args(p: argparse.ArgumentParser) -> None:
    featurizer, model, command = adder(p, "featurizer"), adder(p, "model"), adder(p)
    command("--config", help="YAML config (see experiments/configs/)")
    p.add_argument("--dataset", choices=list(DATASET_INFO))
    p.add_argument("--model", dest="model_name", choices=list(RUNNABLE_MODELS),
                   help="graphormer (default), a PyG baseline: gine, gin-vn, or (own tables) "
                   "a tree model: rf (random forest on Morgan counts), gbm (LightGBM on "
                   "MapLight features: ECFP + Avalon counts, ErG, RDKit descriptors)")
    p.add_argument("--preset", choices=sorted({p for table in PRESETS.values() for p in table}),
                   help="model size (default: the recipe's, i.e. fast for the Graphormer of "
                   "--recipe auto; a config file without recipe: slim for the Graphormer, base "
                   f"for GNNs): {presets_help(mark_default=False)}")
    p.add_argument("--readout", choices=list(READOUTS),
                   help="graphormer head input (default vnode); GNNs: sum or mean pooling")
    p.add_argument("--rwpe-steps", dest="rwpe_steps", type=int,
                   help="graphormer: random-walk PE with this many steps (default 0 = off)")
    p.add_argument("--local-mp", dest="local_mp", choices=list(LOCAL_MP),
                   help="graphormer: GINE message passing beside attention in every block")
    featurizer("--fingerprint-bits", dest="fingerprint_bits", type=int,
               help="featurizer: each molecule's Morgan fingerprint (radius 2) of this many "
               "bits joins the [VNode] (graphormer, gin-vn); 0 = none (default)")
    featurizer("--descriptors", dest="descriptors", nargs="?", const=True, type=_descriptor_flag,
               metavar="SET", help="featurizer: each molecule's RDKit descriptors, standardized "
               "on the training split, join the head's input (or the [VNode], --descriptors-at "
               "vnode); SET rdkit2d (the default: RDKit's 2D list, 205 numbers, ~8 ms a "
               "molecule) or fast (RDKit's C++ descriptors, 121 numbers, ~2 ms: for screening "
               "millions)")
    featurizer("--no-descriptors", dest="descriptors", action="store_const", const=False,
               help="featurizer: no RDKit descriptors (when a recipe has them)")
    model("--descriptors-at", dest="descriptors_at", choices=list(FINGERPRINT_AT),
          help="graphormer: where the descriptors enter (default head)")
    model("--fingerprint-dropout", dest="fingerprint_dropout", type=float,
          help="model: dropout on those bits in training (default 0)")
    model("--fingerprint-at", dest="fingerprint_at", choices=list(FINGERPRINT_AT),
          help="graphormer: the bits join the [VNode] before the first block (default) "
          "or the head's input beside the readout (no [VNode] norm sees them)")
    p.add_argument("--max-time", dest="max_time",
                   help="wall-time budget of the whole run, e.g. 25m, 1h30m, 90s; the LR "
                   "schedule spans it")
    p.add_argument("--norm", help="norm spec, e.g. ln, sep:bn+ln, isobn (see graphnorm.norms)")
    p.add_argument("--sep-slots", dest="sep_slots", choices=list(SEP_SLOTS))
    p.add_argument("--recipe", choices=list(RECIPE_NAMES),
                   help="named training recipe under the flags: auto (default without --config: "
                   "small-table for --data, molhiv-fast, cpu-fast for ZINC), slim (the paper's "
                   "GPU recipe), ... (graphnorm/train/recipes.py)")
    p.add_argument("--max-steps", dest="max_steps", type=int,
                   help="optimizer steps (epochs = steps / batches per epoch); with "
                   "--max-epochs too, the lower limit ends the run; ignored with --max-time")
    p.add_argument("--min-epochs", dest="min_epochs", type=int,
                   help="with --max-steps: train at least this many epochs, so large tables "
                   "get more steps (small-table recipe: 15)")
    p.add_argument("--target-transform", dest="target_transform", choices=["auto", "none"],
                   help="auto (default): fit positive, right-skewed regression targets in log10 "
                   "units, predict in yours; none: raw units")
    p.add_argument("--val-every-steps", dest="val_every_steps", type=int,
                   help="validate about every N optimizer steps (whole epochs) instead of "
                   "every epoch: cheaper on small tables")
    p.add_argument("--patience", type=float,
                   help="stop after N validations in a row without a better validation score; "
                   "below 1, that share of the run's validations (default: train the whole "
                   "budget; admet recipe on small tables: 0.3)")
    p.add_argument("--keep-checkpoints", dest="keep_checkpoints", action="store_const", const=True,
                   help="also keep every validation's checkpoint in OUT/checkpoints/")
    p.add_argument("--trace-validation", dest="trace_validation", action="store_const",
                   const=True, help="record every validation's predictions in "
                   "OUT/val_trace.npz (for a cross-fitted validation score)")
    p.add_argument("--max-epochs", dest="max_epochs", type=int,
                   help="epoch limit; -1 lifts a config's limit, so that the time budget alone "
                   "ends the run (the learning rate follows that budget)")
    p.add_argument("--batch-size", dest="batch_size", type=int)
    p.add_argument("--bucket-pool", dest="bucket_pool", type=int,
                   help="training batches are cut from size-sorted pools of this many batches "
                        "(less padding; default 4)")
    p.add_argument("--random-batches", dest="bucket_by_size", action="store_const", const=False,
                   help="training batches of random molecules, not size-sorted (more padding, "
                        "slower; BatchNorm then sees every size in each batch)")
    p.add_argument("--recalibrate-batches", dest="recalibrate_batches", type=int,
                   help="before each validation, BatchNorm statistics from this many random "
                   "training batches (default 8; 0 keeps the moving averages)")
    p.add_argument("--recalibrate-from", dest="recalibrate_source", choices=["random", "training"],
                   help="those batches: random ones run for it (default), or the last training "
                        "batches' own statistics (no extra forward passes; BatchNorm only)")
    p.add_argument("--lr", type=float)
    p.add_argument("--loss", choices=list(REGRESSION.losses),
                   help="regression loss on standardized targets: l1 (MAE) or mse (RMSE)")
    p.add_argument("--attention-dropout", dest="attention_dropout", type=float)
    p.add_argument("--dropout", type=float)
    p.add_argument("--ema-decay", dest="ema_decay", type=float,
                   help="keep an exponential moving average of the weights (e.g. 0.999 per "
                   "step); validation, checkpoints and predictions use it (default: off)")
    p.add_argument("--uniformity-weight", dest="uniformity_weight", type=float,
                   help="lambda of the uniformity term on [VNode] embeddings (seed paper Eq. 8)")
    p.add_argument("--init-from", dest="init_from",
                   help="fine-tune: start from this checkpoint's weights (all but the head), "
                   "or from a backbone shipped with graphnorm by name (zinc250k: the small-table "
                   "recipe's model; RDKit descriptors may then be added at the head); none: from scratch; "
                   "same model and featurizer settings. benchmark: {variant} in the path "
                   "becomes each run's variant folder, e.g. pre/runs/{variant}/seed0")
    p.add_argument("--raw-dir", dest="raw_dir", help="offline raw data (default: $GRAPHNORM_RAW_DIR)")
    p.add_argument("--cache-root", dest="cache_root")
    p.add_argument("--limit-train", dest="limit_train", type=int)
    p.add_argument("--limit-eval", dest="limit_eval", type=int)
    p.add_argument("--accelerator", help="auto (default: GPU if any), cpu, gpu, ...")
    p.add_argument("--devices", type=int)
    p.add_argument("--strategy")
    p.add_argument("--threads", type=int, help="CPU threads per run (default: one per core)")
    p.add_argument("--num-workers", dest="num_workers", type=int,
                   help="DataLoader worker processes that pad batches (default: none on "
                   "the CPU, min(8, cores - 1) when a GPU trains)")
    p.add_argument("--checkpoint-every", dest="checkpoint_every_n_steps", type=int)
    p.add_argument("--no-progress", dest="progress", action="store_const", const=False)
    own = p.add_argument_group("own data (instead of --dataset; README: Your own molecules)")
    own.add_argument("--data", help="table of molecules: .csv, .tsv, .smi, .sdf, .parquet")
    own.add_argument("--smiles-column", dest="smiles_column",
                     help="SMILES column (default: the column named 'smiles')")
    own.add_argument("--target-columns", dest="target_columns", nargs="+", metavar="COLUMN",
                     help="target columns, one model output each (default: every other "
                     "numeric column)")
    own.add_argument("--task", choices=list(TASK_CHOICES),
                     help="auto (default): classification when every label is 0 or 1, else "
                     "regression; classification: 0/1 labels, ROC-AUC")
    own.add_argument("--metric", choices=list(METRICS),
                     help="picks the checkpoint and is reported (default: rmse for regression, "
                     "rocauc for classification)")
    own.add_argument("--tree-member", dest="tree_member", action=argparse.BooleanOptionalAction,
                     help="add a tree model (--tree-model) as one more ensemble member; predict "
                     "averages it in. Default: on under the small-table recipe (classification: "
                     "rf; regression: gbm) and the admet recipe (gbm), off otherwise")
    own.add_argument("--tree-model", dest="tree_model", choices=list(TREE_MODELS),
                     help="the tree model of --tree-member: rf (the Morgan-count random forest, "
                     "OUT/forest) or gbm (LightGBM on MapLight features, OUT/gbm)")
    # their names before issue 57 (a gbm member is not a forest): still read, not listed
    own.add_argument("--forest-member", dest="tree_member", action=argparse.BooleanOptionalAction,
                     help=argparse.SUPPRESS)
    own.add_argument("--forest-model", dest="tree_model", choices=list(TREE_MODELS),
                     help=argparse.SUPPRESS)
    own.add_argument("--tree-features", dest="tree_features", metavar="SET",
                     help="what the tree model reads (--model rf|gbm, or the tree member): "
                     "default its own set (rf: morgan, gbm: maplight); gbm also reads "
                     "maplight+admet, MapLight plus 9 measured properties predicted by "
                     "boosters shipped with graphnorm (graphnorm/pretrained/README.md), and "
                     "maplight+gnn / maplight+admet+gnn, plus a pre-trained Graphormer's "
                     "embedding and task outputs (--feature-backbone)")
    own.add_argument("--admet-boosters", dest="admet_boosters", metavar="FILE",
                     help="maplight+admet: read this boosters file instead of the shipped one "
                     "(same format; the run keeps a copy, which predict reads)")
    own.add_argument("--feature-backbone", dest="feature_backbone", metavar="CKPT",
                     help="maplight+gnn, maplight+admet+gnn: the pre-trained Graphormer whose "
                     "[VNode] embedding and task outputs the trees read (a `graphnorm "
                     "pretrain` checkpoint; the run keeps a copy, which predict reads)")
    own.add_argument("--tree-refit", dest="tree_refit", action=argparse.BooleanOptionalAction,
                     help="fit the tree model (--model rf|gbm, or the tree member) once more on "
                     "train + validation after validation is scored; the saved model and the "
                     "test scores come from that fit (nothing of a tree model is chosen on "
                     "validation). Default: on under --recipe admet, off otherwise")
    own.add_argument("--tree-weight", dest="tree_weight", metavar="{equal,val,W,val:W,val:equal}",
                     help="the tree member's weight in the ensemble mean: equal (one member like "
                     "the others), val (chosen on the validation split, graph members share "
                     "the rest), a fixed weight W in [0, 1], or val:W / val:equal (W, or one "
                     "member's share, unless validation prefers another weight by more than "
                     "one bootstrap standard error). Default: val:equal for regression tables "
                     "under the small-table recipe, equal otherwise")
    own.add_argument("--member-average", dest="member_average", choices=["mean", "logodds"],
                     help="how an ensemble averages its members on a classification task: mean "
                     "of the probabilities, or logodds (the mean log-odds: a confident member "
                     "weighs more). Regression always takes the mean. Default: logodds under "
                     "--recipe admet, mean otherwise")
    own.add_argument("--split", help="scaffold, random, column:NAME (train/val/test per row), "
                     "file:RUN/splits.json (a previous run's split) or tdc:NAME (NAME says "
                     "test for the fixed test rows; the rest gets PyTDC's scaffold split)")
    own.add_argument("--split-sizes", dest="split_sizes", help="train,val,test fractions")
    own.add_argument("--split-seed", dest="split_seed", type=int,
                     help="seed of the scaffold/random split (apart from --seed)")


def _descriptor_flag(text: str) -> bool | str:
    from graphnorm.chem.descriptors import descriptor_set  # here: the parser imports no RDKit

    try:
        return descriptor_set(text)
    except ValueError as e:  # argparse shows an ArgumentTypeError's own words
        raise argparse.ArgumentTypeError(str(e)) from None


def adder(parser, block: Optional[str] = None) -> Callable[..., argparse.Action]:
    """``parser.add_argument`` for the flags that are not TrainConfig fields, declared where
    they are added: ``block`` "featurizer" or "model": the flag sets one key (its dest) of
    that dict field (--fingerprint-bits: featurizer.fingerprint_bits); None: a flag of the
    command itself, not a config value (--config, --jobs; benchmark's --out is the
    benchmark's folder, not a run's)."""
    def add(*names, **kwargs) -> argparse.Action:
        action = parser.add_argument(*names, **kwargs)
        action.config_block = block
        return action
    return add


def config_dests(parser: argparse.ArgumentParser) -> dict[str, Optional[str]]:
    """The flags of a train/benchmark/hpopt parser that feed its TrainConfig: dest -> None
    (the dest is a TrainConfig field) or the dict block it sets one key of (`adder`).
    Derived from TrainConfig's fields, not listed by hand; a flag that is neither a field,
    a block key nor declared by `adder` is an error here, so a new flag cannot be dropped
    on its way to the config without anyone noticing."""
    from graphnorm.train.config import TrainConfig

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    out, unknown = {}, []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if hasattr(action, "config_block"):  # declared: a block key, or aside (None)
            if action.config_block is not None:
                out[action.dest] = action.config_block
        elif action.dest in fields:
            out[action.dest] = None
        else:
            unknown.append("/".join(action.option_strings) or action.dest)
    if unknown:
        raise ValueError(f"flags {unknown} are neither TrainConfig fields nor declared with "
                         "adder (one key of a dict block, or not a config value)")
    return out


def config_flags(args: argparse.Namespace) -> dict:
    """The TrainConfig values the command's flags give (None: not given), block keys nested
    in their block: the ``flag_values`` of `graphnorm.train.resolve.resolve_config`."""
    out: dict = {}
    for dest, block in args.config_dests.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if block is None:
            out[dest] = value
        else:
            out.setdefault(block, {})[dest] = value
    return out


def resolved_config(args: argparse.Namespace, settings: Optional[dict] = None):
    """The run's TrainConfig: config file and flags through `resolve_config`, which reads the
    user's table (for the rules that follow it) with the data layer's reader and whose notes
    are printed. ``settings``: TrainConfig values given as if by flags, over ``args``'s (a
    TDC suite task's table flags), so that ``args`` is never edited."""
    from graphnorm.data.table import read_table
    from graphnorm.train.config import read_yaml
    from graphnorm.train.resolve import resolve_config

    flags = dict(config_flags(args), **(settings or {}))
    return resolve_config(read_yaml(args.config) if args.config else None, flags,
                          read_table=read_table, note=print_note)

