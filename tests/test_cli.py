"""`graphnorm --help` texts and the CLI's process set-up (no training here)."""
import argparse
import dataclasses
import os
import subprocess
import sys

import pytest

from graphnorm.cli import build_parser
from graphnorm.train.config import TrainConfig


def _help(*argv) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])


def test_train_help_shows_trainconfig_defaults(capsys):
    _help("train")
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    options = text.split("options:", 1)[1]  # not the usage line
    cfg = TrainConfig()
    for flag, value in [("--batch-size", cfg.batch_size), ("--lr", cfg.lr),
                        ("--seed", cfg.seed), ("--max-epochs", cfg.epochs_limit)]:
        after = options.split(f"{flag} {flag.lstrip('-').replace('-', '_').upper()}", 1)[1]
        assert f"default: {value}" in after.split(" --", 1)[0] or \
            f"under a config file: {value}" in after.split(" --", 1)[0], flag
    assert "default: the recipe's; under a config file: 256" in text  # --batch-size
    assert "a --config file replaces it" in text


def test_benchmark_has_one_documented_norms_flag(capsys):
    _help("benchmark")
    text = " ".join(capsys.readouterr().out.split())
    assert "--norms NORMS comma list of norm specs" in text and "--norm NORM" not in text
    assert "--out OUT (default" not in text  # required flags show no default
    parse = build_parser().parse_args
    assert parse(["benchmark", "--out", "x", "--norm", "ln,bn"]).norms == "ln,bn"  # alias
    assert parse(["benchmark", "--out", "x"]).norms is None  # the recipe's norm
    assert parse(["train", "--norm", "ln"]).norm == "ln"  # train keeps its --norm


def test_analyze_raw_dir_has_help(capsys):
    _help("analyze")
    text = " ".join(capsys.readouterr().out.split())
    assert "--raw-dir RAW_DIR offline raw data folder" in text and "GRAPHNORM_RAW_DIR" in text


@pytest.mark.slow  # starts Python processes that import torch
def test_cli_asks_openmp_for_passive_waiting_before_torch_loads(tmp_path):
    """OMP_WAIT_POLICY only counts if set before torch is imported: importing the CLI must
    not import torch, and main() sets the variable unless the user chose one."""
    code = ("import os, sys; from graphnorm.cli import main; assert 'torch' not in sys.modules; "
            f"main(['train', '--raw-dir', {str(tmp_path)!r}, '--out', {str(tmp_path / 'o')!r}]); "
            "print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0 and run.stdout.split() == ["PASSIVE"], run.stderr[-2000:]
    assert "--raw-dir" in run.stderr  # the no-data error, in CLI words
    env["OMP_WAIT_POLICY"] = "ACTIVE"  # a user's choice is kept (any command: --help loads
    # no training stack, so this half costs an interpreter start, not a torch import)
    code = ("import os, contextlib; from graphnorm.cli import main\n"
            "with contextlib.suppress(SystemExit): main(['--help'])\n"
            "print(os.environ['OMP_WAIT_POLICY'])")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.stdout.split()[-1:] == ["ACTIVE"], run.stderr[-2000:]


def test_python_m_graphnorm_cli_is_the_console_script():
    """graphnorm/cli/ is a package: `python -m graphnorm.cli` (tests and experiments start
    commands so) runs its __main__.py, the same main() as the `graphnorm` script."""
    run = subprocess.run([sys.executable, "-m", "graphnorm.cli", "--help"], capture_output=True,
                         text=True, env={**os.environ, "COLUMNS": "100"})
    assert run.returncode == 0 and run.stdout.startswith("usage: graphnorm "), run.stderr[-2000:]
    assert "SepNorm" in run.stdout


def test_one_module_per_command():
    """graphnorm/cli/<command>.py registers `graphnorm <command>` and runs it."""
    import importlib

    from graphnorm.cli import COMMANDS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert [m.__name__.rpartition(".")[2] for m in COMMANDS] == list(sub.choices)
    for name, parser in sub.choices.items():
        module = importlib.import_module(f"graphnorm.cli.{name}")
        assert parser.get_default("func") is module.run

def test_a_named_command_builds_only_its_own_parser(capsys):
    # `graphnorm admet ...` does not pay for the other commands' flags; the same arguments
    # parse the same way as with every parser built; a wrong command still lists them all
    only = build_parser(["admet", "--smiles", "CCO"])
    sub = next(a for a in only._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == ["admet"]
    argv = ["admet", "--smiles", "CCO", "--output", "p.csv"]
    assert vars(only.parse_args(argv)) == vars(build_parser().parse_args(argv))
    for wrong in (["tarin", "--data", "t.csv"], ["--help"]):
        with pytest.raises(SystemExit):
            build_parser(wrong).parse_args(wrong)
        text = capsys.readouterr()
        assert "predict" in text.out + text.err and "panel" in text.out + text.err


def test_a_stray_argument_is_refused_by_its_command_naming_a_files_flag(tmp_path, capsys):
    from graphnorm.cli import main

    table = tmp_path / "mols.csv"
    table.write_text("smiles\nCCO\n")
    with pytest.raises(SystemExit) as stop:
        main(["admet", str(table)])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert "usage: graphnorm admet" in err and "{admet}" not in err
    assert f"unrecognized arguments: {table} (a file is given as --input {table})" in err
    with pytest.raises(SystemExit):  # not a file: no guess
        main(["admet", "--smiles", "CCO", "--bogus"])
    err = capsys.readouterr().err
    assert "graphnorm admet: error: unrecognized arguments: --bogus" in err
    assert "--input" not in err.splitlines()[-1]


def _choices(command: str, dest: str):
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return next(a for a in sub._actions if a.dest == dest).choices


def test_cli_choices_are_the_registries():
    from graphnorm.data.info import DATASET_INFO, METRICS, SPLITS, TASK_CHOICES
    from graphnorm.graph import graphormer
    from graphnorm.models import MODEL_KINDS, MODEL_NAMES, PRESETS, RUNNABLE_MODELS
    from graphnorm.tasks import HIGHER_IS_BETTER
    from graphnorm.train.recipes import RECIPE_NAMES, RECIPES

    assert tuple(_choices("train", "model_name")) == RUNNABLE_MODELS == tuple(MODEL_KINDS)
    trees = tuple(n for n, k in MODEL_KINDS.items() if k.tree)
    assert tuple(_choices("train", "tree_model")) == trees and set(MODEL_NAMES).isdisjoint(trees)
    assert tuple(_choices("train", "metric")) == METRICS == tuple(HIGHER_IS_BETTER)
    assert tuple(_choices("benchmark", "recipe")) == RECIPE_NAMES == ("auto", *RECIPES)
    assert list(_choices("train", "dataset")) == list(DATASET_INFO) == list(_choices("analyze", "dataset"))
    assert set(_choices("benchmark", "preset")) == {p for t in PRESETS.values() for p in t}
    assert tuple(_choices("train", "task")) == TASK_CHOICES
    assert tuple(_choices("analyze", "split")) == SPLITS
    assert tuple(_choices("train", "readout")) == graphormer.READOUTS
    assert tuple(_choices("train", "local_mp")) == graphormer.LOCAL_MP
    assert tuple(_choices("benchmark", "sep_slots")) == graphormer.SEP_SLOTS


def test_analyze_takes_the_dataset_from_the_checkpoint_unless_data_is_given():
    args = build_parser().parse_args(["analyze", "--checkpoint", "x.ckpt", "--out", "o"])
    assert args.dataset is None and args.data is None  # the checkpoint's dataset
    from graphnorm.cli import main

    assert main(["analyze", "--checkpoint", "x.ckpt", "--out", "o", "--dataset", "zinc-subset",
                 "--data", "m.csv"]) == 2


def test_fingerprint_bits_joins_the_configs_featurizer_block(tmp_path):
    from resolved import resolved

    path = tmp_path / "c.yaml"
    path.write_text("dataset: ogbg-molhiv\nfeaturizer:\n  max_hops: 3\n")
    cfg = resolved(["train", "--config", str(path), "--fingerprint-bits", "2048"])
    assert cfg.featurizer == {"max_hops": 3, "fingerprint_bits": 2048}
    assert cfg.featurizer_config("ogb").tag == "h3-d20-fp2048"
    plain = resolved(["train", "--config", str(path)])
    assert plain.featurizer == {"max_hops": 3} and plain.model == {}
    bench = ["benchmark", "--config", str(path), "--fingerprint-bits", "64",
             "--fingerprint-dropout", "0.3", "--out", "o"]
    assert resolved(bench).model == {"fingerprint_dropout": 0.3}
    assert resolved(["train", "--config", str(path), "--fingerprint-bits", "64",
                     "--fingerprint-at", "head"]).model == {"fingerprint_at": "head"}
    assert not build_parser().parse_args(bench).summary_only
    assert build_parser().parse_args(["benchmark", "--out", "o", "--summary-only"]).summary_only


def test_batch_order_flags_reach_the_train_config():
    from resolved import resolved

    cfg = resolved(["benchmark", "--out", "o", "--random-batches", "--bucket-pool", "8"])
    assert cfg.bucket_by_size is False and cfg.bucket_pool == 8
    cfg = resolved(["train"])
    assert cfg.bucket_by_size is True and cfg.bucket_pool == 4
    assert resolved(["train", "--num-workers", "3"]).num_workers == 3
    assert resolved(["train"]).num_workers is None  # TrainConfig.loader_workers decides
    assert resolved(["benchmark", "--out", "o", "--recalibrate-batches", "2"]).recalibrate_batches == 2
    assert resolved(["train"]).recalibrate_batches == 8
    assert resolved(["train"]).recalibrate_source == "random"
    assert resolved(["train", "--recalibrate-from", "training"]).recalibrate_source == "training"
    assert resolved(["train", "--recipe", "admet"]).recalibrate_source == "training"
    with pytest.raises(ValueError, match="recalibrate_source must be random or training"):
        TrainConfig(recalibrate_source="moving")


def test_loader_workers_feed_a_gpu_and_stay_off_on_the_cpu(monkeypatch):
    import torch

    from graphnorm.train.config import TrainConfig

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert TrainConfig().loader_workers() == 0
    assert TrainConfig(num_workers=2).loader_workers() == 2
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert TrainConfig().loader_workers() == 8
    assert TrainConfig(accelerator="cpu").loader_workers() == 0
    assert TrainConfig(num_workers=0).loader_workers() == 0
    with pytest.raises(ValueError, match="num_workers"):
        TrainConfig(num_workers=-1)


def test_top_help_is_one_clean_description(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "SepNorm" in text and "``" not in text and "|" not in text.split("positional", 1)[0]


def _subparser(command: str):
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


# the flags of each command that are not TrainConfig values (graphnorm.train.cli.adder(p));
# pinned, so that a config flag cannot be declared away without this list changing too
COMMAND_FLAGS = {
    "train": {"config", "jobs"},
    "benchmark": {"config", "norms", "models", "seeds", "repeats", "baseline", "suite", "tasks",
                  "tdc_dir", "leaderboard", "final", "ledger", "ledger_summary", "out", "jobs",
                  "summary_only"},
    "hpopt": {"config", "max_time", "trials", "search_seed", "out"},
}


@pytest.mark.parametrize("command", sorted(COMMAND_FLAGS))
def test_config_flags_are_derived_from_trainconfig(command):
    """Every flag of train/benchmark/hpopt is a TrainConfig field, one key of a dict block, or
    a declared flag of the command; the config keys are the fields among the dests."""
    from graphnorm.train.cli import config_dests

    parser = _subparser(command)
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    dests = {a.dest for a in parser._actions if not isinstance(a, argparse._HelpAction)}
    derived = config_dests(parser)
    blocks = {d for d, block in derived.items() if block}
    assert blocks == {"fingerprint_bits", "descriptors", "descriptors_at", "fingerprint_dropout",
                      "fingerprint_at"}
    assert {d for d, block in derived.items() if block is None} == dests - blocks - COMMAND_FLAGS[command]
    assert dests - blocks - COMMAND_FLAGS[command] <= fields
    assert parser.get_default("config_dests") == derived


def test_a_new_flag_must_say_where_it_goes():
    from graphnorm.train.cli import add_train_args, adder, config_dests

    parser = argparse.ArgumentParser()
    add_train_args(parser)
    parser.add_argument("--warmup-steps", dest="warmup_steps", type=int)  # a field: a config key
    assert config_dests(parser)["warmup_steps"] is None
    adder(parser, "model")("--heads", type=int)
    assert config_dests(parser)["heads"] == "model"
    parser.add_argument("--new-knob", dest="new_knob", type=int)
    with pytest.raises(ValueError, match="--new-knob"):
        config_dests(parser)


def test_config_flags_are_what_was_given_with_block_keys_nested():
    from graphnorm.train.cli import config_flags

    args = build_parser().parse_args(["benchmark", "--out", "o", "--lr", "1e-3", "--no-descriptors",
                                      "--fingerprint-at", "head", "--seeds", "2", "--ensemble", "3"])
    assert config_flags(args) == {"lr": 1e-3, "ensemble": 3, "featurizer": {"descriptors": False},
                                  "model": {"fingerprint_at": "head"}}


def test_an_unknown_descriptor_set_is_refused_by_name(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--data", "m.csv", "--descriptors", "mordred"])
    assert "one of ['fast', 'rdkit2d'], got 'mordred'" in capsys.readouterr().err


def test_graphnorm_warnings_read_like_its_errors_third_party_ones_keep_pythons_form(monkeypatch):
    import warnings

    import graphnorm
    import graphnorm.cli as cli

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after
    ours = os.path.join(os.path.dirname(graphnorm.__file__), "train", "tree_run.py")
    theirs = os.path.join(os.path.dirname(pytest.__file__), "x.py")
    cli._plain_warnings("train")
    assert warnings.formatwarning("boosters saw 3 test molecules", UserWarning, ours, 72,
                                  "overlap = f()") == "graphnorm train: warning: boosters saw 3 test molecules\n"
    shown = warnings.formatwarning("deprecated", DeprecationWarning, theirs, 9, "x()")
    assert shown.startswith(f"{theirs}:9: DeprecationWarning: deprecated")
