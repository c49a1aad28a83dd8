"""TrainConfig's schema (graphnorm/train/config_schema.py): every setting has a block and a
help; config files may nest settings by block; each block has a typed view; the flags of
train/benchmark/hpopt come from the schema, so a new setting needs no hand-written flag."""
import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
import yaml

from graphnorm.cli import build_parser
from graphnorm.train import config as config_module
from graphnorm.train import resolve as resolve_module
from graphnorm.train.cli import config_flags
from graphnorm.train.config import TrainConfig, read_yaml
from graphnorm.train.config_schema import BLOCKS, kebab, setting
from graphnorm.train.resolve import resolve_config

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "experiments" / "configs").glob("*.yaml"))


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _nested(flat: dict) -> dict:
    """``flat`` with every setting under its block (earlier key names stay flat)."""
    block_of = {n: b for b, names in TrainConfig.blocks().items() for n in names}
    out: dict = {}
    for key, value in flat.items():
        if key in block_of:
            out.setdefault(block_of[key], {})[key] = value
        else:
            out[key] = value
    return out


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def test_every_setting_has_one_block_and_a_help():
    names = [f.name for f in dataclasses.fields(TrainConfig)]
    blocks = TrainConfig.blocks()
    assert list(blocks) == list(BLOCKS)
    assert sorted(n for block in blocks.values() for n in block) == sorted(names)
    for f in dataclasses.fields(TrainConfig):
        text = f.metadata["help"]
        assert (text() if callable(text) else text).strip(), f.name
    assert {"dataset", "raw_dir", "split", "featurizer"} <= set(blocks["data"])
    assert {"norm", "preset", "readout", "dropout", "model"} <= set(blocks["architecture"])
    assert {"lr", "batch_size", "max_steps", "patience"} <= set(blocks["optimization"])
    assert {"ensemble", "tree_member", "tree_model", "tree_weight", "member_average",
            "tree_features"} <= set(blocks["ensemble"])
    assert {"seed", "out", "threads", "progress", "devices"} <= set(blocks["runtime"])


def test_a_block_view_is_a_frozen_typed_dataclass_of_its_settings():
    cfg = TrainConfig(lr=1e-3, ensemble=3, featurizer={"max_hops": 3})
    opt = cfg.block("optimization")
    assert (opt.lr, opt.batch_size) == (1e-3, cfg.batch_size)
    assert type(opt).__name__ == "OptimizationSettings"
    assert [f.name for f in dataclasses.fields(opt)] == list(TrainConfig.blocks()["optimization"])
    assert dataclasses.fields(opt)[0].type == int  # bucket_pool, typed as in TrainConfig
    with pytest.raises(dataclasses.FrozenInstanceError):
        opt.lr = 1.0
    assert cfg.block("ensemble").ensemble == 3 and cfg.block("data").featurizer == {"max_hops": 3}
    merged = {}
    for name in BLOCKS:
        merged.update(dataclasses.asdict(cfg.block(name)))
    assert merged == cfg.to_dict()  # the blocks together are the config
    with pytest.raises(ValueError, match="unknown block 'model'.*architecture"):
        cfg.block("model")


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_nested_and_flat_config_files_read_alike(path, tmp_path):
    flat = yaml.safe_load(path.read_text())
    nested = _write(tmp_path / "nested.yaml", _nested(flat))
    assert read_yaml(nested) == read_yaml(path)
    assert resolve_config(read_yaml(nested), {}) == resolve_config(read_yaml(path), {})


def test_flat_and_nested_mix_and_data_and_ensemble_are_settings_or_blocks(tmp_path):
    mixed = _write(tmp_path / "mixed.yaml", {
        "recipe": "small-table", "data": {"data": "t.csv", "split": "random",
                                          "featurizer": {"descriptors": False}},
        "architecture": {"preset": "small", "model": {"num_layers": 2}},
        "optimization": {"lr": 0.001}, "ensemble": {"ensemble": 2, "tree_member": False},
        "runtime": None, "seed": 3, "forest_model": "gbm"})
    flat = _write(tmp_path / "flat.yaml", {
        "recipe": "small-table", "data": "t.csv", "split": "random",
        "featurizer": {"descriptors": False}, "preset": "small", "model": {"num_layers": 2},
        "lr": 0.001, "ensemble": 2, "tree_member": False, "seed": 3, "forest_model": "gbm"})
    assert read_yaml(mixed) == read_yaml(flat)
    cfg = resolve_config(read_yaml(mixed), {})
    assert cfg == resolve_config(read_yaml(flat), {})
    assert (cfg.data, cfg.ensemble, cfg.model, cfg.tree_model) == ("t.csv", 2, {"num_layers": 2},
                                                                   "gbm")
    # the same value flat and nested is one setting given twice, not a conflict
    twice = _write(tmp_path / "twice.yaml", {"lr": 0.001, "optimization": {"lr": 0.001}})
    assert read_yaml(twice) == {"lr": 0.001}


@pytest.mark.parametrize("content, message", [
    ({"optimization": {"dataset": "zinc-full"}},
     r"dataset is a setting of block data, not optimization"),
    ({"architecture": {"lr": 0.1}}, r"lr is a setting of block optimization, not architecture"),
    ({"training": {"lr": 0.1}}, r"unknown block 'training'"),
    ({"optimisation": {"lr": 0.1}},
     r"unknown block 'optimisation' \(did you mean optimization\?\)"),
    ({"lrr": 0.1}, r"unknown setting 'lrr' \(did you mean lr\?\)"),
    ({"optimization": {"learning_rate": 0.1}}, r"optimization: learning_rate is not a setting"),
    ({"ensemble": {"forest_member": True}},
     r"forest_member is not a setting there \(the earlier name of tree_member\)"),
    ({"lr": 0.1, "optimization": {"lr": 0.2}},
     r"lr is given twice with different values: lr: 0.1 and optimization: \{lr: 0.2\}"),
    ({"optimization": 3}, r"optimization is a block of settings; give it a mapping"),
])
def test_nesting_errors_name_the_file_and_the_key(tmp_path, content, message):
    path = _write(tmp_path / "bad.yaml", content)
    with pytest.raises(ValueError, match=message) as err:
        read_yaml(path)
    assert str(path) in str(err.value)


def test_the_flags_are_the_schemas():
    """Each setting with a flag in a command is that flag (named after it unless its setting
    names it), with its dest, type and help."""
    for command in ("train", "benchmark", "hpopt"):
        parser = _subparser(command)
        by_dest = {}
        for action in parser._actions:
            by_dest.setdefault(action.dest, []).append(action)
        for f in dataclasses.fields(TrainConfig):
            meta = f.metadata
            if meta["flag"] is False or command not in meta["commands"]:
                continue
            name = kebab(f.name) if meta["flag"] is True else meta["flag"]
            if (command, name) in {("benchmark", "--norm"), ("hpopt", "--max-time")}:
                continue  # the command's own flag of that name (--norms alias, search budget)
            action = next(a for a in by_dest[f.name] if name in a.option_strings)
            assert action.help and action.default is None, (command, name)
    assert _subparser("train")._option_string_actions["--lr"].type is float
    assert _subparser("train")._option_string_actions["--max-steps"].type is int
    hpopt = _subparser("hpopt")._option_string_actions
    assert "--ensemble" not in hpopt
    assert hpopt["--seed"].help.startswith("model seed of every trial")
    assert _subparser("benchmark")._option_string_actions["--ensemble"].help.startswith(
        "each run is an ensemble")
    # --help has a section per block, holding its settings' flags and the block's written ones
    sections = {g.title: {a.dest for a in g._group_actions}
                for g in _subparser("train")._action_groups}
    assert set(BLOCKS) <= set(sections)
    assert {"lr", "max_steps"} <= sections["optimization"]
    assert {"dataset", "fingerprint_bits", "descriptors"} <= sections["data"]
    assert {"model_name", "fingerprint_at"} <= sections["architecture"]


@dataclass(frozen=True)
class ToyConfig(TrainConfig):
    toy_knob: int = setting(3, "optimization", "a toy knob the tests add")
    toy_switch: bool = setting(False, "runtime", "a toy switch")
    toy_rate: Optional[float] = setting(None, "architecture", "a toy rate",
                                        commands=("train",), choices=[0.5, 1.0])


def test_a_new_setting_gets_its_flag_with_no_other_code(monkeypatch, tmp_path):
    monkeypatch.setattr(config_module, "TrainConfig", ToyConfig)
    monkeypatch.setattr(resolve_module, "TrainConfig", ToyConfig)
    parser = build_parser()
    args = parser.parse_args(["train", "--toy-knob", "5", "--toy-switch", "--toy-rate", "0.5"])
    assert config_flags(args) == {"toy_knob": 5, "toy_switch": True, "toy_rate": 0.5}
    cfg = resolve_config(None, config_flags(args))
    assert (type(cfg), cfg.toy_knob, cfg.toy_switch, cfg.toy_rate) == (ToyConfig, 5, True, 0.5)
    assert cfg.block("optimization").toy_knob == 5
    toy = _subparser("train")._option_string_actions
    assert toy["--toy-knob"].help.startswith("a toy knob") and "--no-toy-switch" in toy
    assert "--toy-rate" not in _subparser("benchmark")._option_string_actions
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--toy-rate", "2"])  # its choices
    # and a config file reads it, flat or under its block
    nested = _write(tmp_path / "toy.yaml", {"optimization": {"toy_knob": 7}})
    assert resolve_config(read_yaml(nested), {}).toy_knob == 7


def test_a_setting_with_no_flag_type_must_say_so(monkeypatch):
    @dataclass(frozen=True)
    class Listed(TrainConfig):
        toy_list: list = setting(block="data", help="a list", factory=list)

    monkeypatch.setattr(config_module, "TrainConfig", Listed)
    with pytest.raises(TypeError, match="toy_list.*nargs.*flag=False"):
        build_parser()
