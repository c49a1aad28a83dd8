"""``train --init-from``: pre-trained weights in, the head fresh, mismatches refused by name."""
import dataclasses
import json
from pathlib import Path

import pytest
import torch

from graphnorm.checkpoints import load_checkpoint
from graphnorm.models import build_model
from graphnorm.train.config import TrainConfig
from graphnorm.train.init_from import InitFromError, init_from_checkpoint


@pytest.fixture(scope="module")
def pretrained(tiny_run):
    out, _ = tiny_run
    return out / "best.ckpt", load_checkpoint(out / "best.ckpt")


def test_copies_every_tensor_but_the_head(pretrained):
    path, loaded = pretrained
    config = dict(loaded.meta["model_config"], num_tasks=3, dropout=0.3)  # free to differ
    torch.manual_seed(123)
    model = build_model(config)
    info = init_from_checkpoint(model, config, loaded.featurizer, path)
    source, target = loaded.model.state_dict(), model.state_dict()
    body = [k for k in source if not k.startswith("head.")]
    assert info["tensors"] == len(body) and info["epoch"] == loaded.epoch + 1
    assert all(torch.equal(source[k], target[k]) for k in body)  # BN statistics included
    assert target["head.weight"].shape[0] == 3  # the new task's width, fresh weights


def test_a_fresh_model_differs_before_loading(pretrained):
    """The test above could pass vacuously if two models were always equal."""
    _, loaded = pretrained
    torch.manual_seed(123)
    model = build_model(loaded.meta["model_config"])
    differs = [k for k, v in loaded.model.state_dict().items()
               if v.is_floating_point() and not torch.equal(v, model.state_dict()[k])]
    assert len(differs) > 10


@pytest.mark.parametrize("field, change, message", [
    ("max_hops", lambda v: v + 1, "featurized differently.*max_hops"),
    # to_dict leaves out fingerprint_bits when 0: the message must say 0, not None
    ("fingerprint_bits", lambda v: 64, "fingerprint_bits: 0 in the checkpoint, 64 in this run"),
])
def test_another_featurizer_is_refused_by_name(pretrained, field, change, message):
    path, loaded = pretrained
    other = dataclasses.replace(loaded.featurizer, **{field: change(getattr(loaded.featurizer, field))})
    config = dict(loaded.meta["model_config"], **{field: getattr(other, field)})
    with pytest.raises(InitFromError, match=message):
        init_from_checkpoint(build_model(config), config, other, path)


def test_another_norm_is_refused_by_name(pretrained):
    path, loaded = pretrained
    config = dict(loaded.meta["model_config"], norm="ln")
    assert loaded.meta["model_config"]["norm"] != "ln"
    with pytest.raises(InitFromError, match="another model.*norm: 'sep:bn\\+ln' in the checkpoint, 'ln'"):
        init_from_checkpoint(build_model(config), config, loaded.featurizer, path)


def _with_descriptors(loaded, at="head"):
    from graphnorm.chem.descriptors import descriptor_count

    featurizer = dataclasses.replace(loaded.featurizer, descriptors=True)
    config = dict(loaded.meta["model_config"], descriptors=descriptor_count(), descriptors_at=at)
    return featurizer, config


def test_descriptors_may_be_added_at_the_head(pretrained):
    """A backbone trained without descriptors (the shipped one regressed them) takes them at
    the head: the body is copied, the descriptor encoder starts fresh like the head."""
    path, loaded = pretrained
    featurizer, config = _with_descriptors(loaded)
    model = build_model(config)
    fresh = {k: v.clone() for k, v in model.state_dict().items() if k.startswith("descriptors.")}
    info = init_from_checkpoint(model, config, featurizer, path)
    assert info["added_at_head"] == ["descriptors"] and fresh
    source, target = loaded.model.state_dict(), model.state_dict()
    assert all(torch.equal(source[k], target[k]) for k in source if not k.startswith("head."))
    assert all(torch.equal(v, target[k]) for k, v in fresh.items())


def test_descriptors_at_the_vnode_are_not_addable(pretrained):
    """At the [VNode] they would change what every block sees: another model, refused."""
    path, loaded = pretrained
    featurizer, config = _with_descriptors(loaded, at="vnode")
    with pytest.raises(InitFromError, match="featurized differently.*descriptors: False"):
        init_from_checkpoint(build_model(config), config, featurizer, path)


def test_a_backbone_name_resolves_to_the_package_file(monkeypatch, tmp_path):
    import graphnorm.pretrained as pretrained

    assert pretrained.resolve_init_from("runs/x") == Path("runs/x")
    monkeypatch.setitem(pretrained.BACKBONES, "here", "__init__.py")  # a file that is installed
    assert pretrained.resolve_init_from("here") == Path(pretrained.__file__)
    with pytest.raises(pretrained.PretrainedError, match="no pre-trained backbone named 'zinc1'"):
        pretrained.pretrained_path("zinc1")
    monkeypatch.setitem(pretrained.BACKBONES, "gone", "gone.ckpt")
    with pytest.raises(pretrained.PretrainedError, match="'gone' is not installed"):
        pretrained.pretrained_path("gone")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()  # a local run folder of that name wins over the package
    assert pretrained.resolve_init_from("here") == Path("here")


def test_a_stripped_checkpoint_loads_as_the_run_did(pretrained, tmp_path):
    from graphnorm.checkpoints import strip_checkpoint

    path, loaded = pretrained
    small = strip_checkpoint(path, tmp_path / "small.ckpt")
    again = load_checkpoint(small)
    assert small.stat().st_size < path.stat().st_size
    assert again.epoch == loaded.epoch and again.meta == loaded.meta
    assert all(torch.equal(v, again.model.state_dict()[k]) for k, v in loaded.model.state_dict().items())


@pytest.mark.parametrize("make", [lambda d: d / "nothing.ckpt",
                                  lambda d: (d / "x.ckpt").write_bytes(b"") or d / "x.ckpt"])
def test_missing_or_empty_checkpoint_gives_a_clear_error(pretrained, tmp_path, make):
    _, loaded = pretrained
    config = loaded.meta["model_config"]
    with pytest.raises(InitFromError, match="--init-from: .*(not found|empty)"):
        init_from_checkpoint(build_model(config), config, loaded.featurizer, make(tmp_path))


def test_training_from_a_checkpoint_records_it(tiny_run, raw_dir, cache_root, tmp_path):
    from tiny_runs import tiny_config

    from graphnorm.train.run import train

    source, _ = tiny_run
    out = tmp_path / "fine"
    result = train(tiny_config(raw_dir, cache_root, out, max_epochs=1, init_from=str(source)))
    digest = result["init_from"]["sha256"]
    assert result["init_from"]["path"] == str(source / "best.ckpt") and len(digest) == 64
    assert json.loads((out / "init_from.json").read_text())["sha256"] == digest
    assert json.loads((out / "metrics.json").read_text())["config"]["init_from"] == str(source)


def test_a_refused_init_leaves_no_run_folder(tiny_run, raw_dir, cache_root, tmp_path):
    from tiny_runs import tiny_config

    from graphnorm.train.run import train

    source, _ = tiny_run
    out = tmp_path / "refused"
    with pytest.raises(InitFromError, match="norm"):
        train(tiny_config(raw_dir, cache_root, out, norm="ln", init_from=str(source)))
    assert not out.exists()


def test_benchmark_points_each_variant_at_its_own_checkpoint(tmp_path, monkeypatch):
    import graphnorm.bench.benchmark as bench
    from graphnorm.train.config import TrainConfig

    seen = []
    monkeypatch.setattr(bench, "train_run", lambda cfg: seen.append((cfg.norm, cfg.init_from)))
    monkeypatch.setattr(bench, "summarize", lambda *a, **k: None)
    cfg = TrainConfig(dataset="zinc-subset", preset="tiny", progress=False,
                      init_from="pre/runs/{variant}/seed0")
    bench.run_benchmark(cfg, norms=["ln", "sep:bn+ln"], seeds=1, out=tmp_path)
    assert seen == [("ln", "pre/runs/ln/seed0"),
                    ("sep:bn+ln", f"pre/runs/{bench.slug('sep:bn+ln')}/seed0")]
    assert Path(seen[1][1]).name == "seed0"


def test_benchmark_gives_a_recipe_backbone_to_the_variants_it_fits(tmp_path, monkeypatch):
    import graphnorm.bench.benchmark as bench
    from graphnorm.train.config import TrainConfig
    from graphnorm.train.recipes import RECIPES, apply_recipe

    monkeypatch.setitem(RECIPES, "small-table", dict(RECIPES["small-table"], init_from="zinc250k"))
    seen = []
    monkeypatch.setattr(bench, "run_one", lambda cfg: seen.append((cfg.model_name, cfg.norm, cfg.init_from)))
    monkeypatch.setattr(bench, "summarize", lambda *a, **k: None)
    cfg = TrainConfig.from_dict(apply_recipe({"data": "t.csv", "progress": False}, "small-table"))
    bench.run_benchmark(cfg, norms=["sep:bn+bn", "ln"], seeds=1, out=tmp_path,
                        models=["graphormer", "gin-vn"])
    assert sorted(seen) == [("gin-vn", "sep:bn+bn", None), ("graphormer", "ln", None),
                            ("graphormer", "sep:bn+bn", "zinc250k")]


def test_a_shipped_backbone_is_named_and_a_missing_one_says_how_to_train_from_scratch(
        pretrained, monkeypatch):
    import graphnorm.pretrained as shipped

    path, loaded = pretrained
    config = loaded.meta["model_config"]
    monkeypatch.setitem(shipped.BACKBONES, "tiny", str(path))  # absolute: the package path joins it
    info = init_from_checkpoint(build_model(config), config, loaded.featurizer, "tiny")
    assert info["shipped"] == "tiny" and info["path"] == str(path)
    assert "shipped" not in init_from_checkpoint(build_model(config), config, loaded.featurizer, path)
    monkeypatch.setitem(shipped.BACKBONES, "gone", "gone.ckpt")
    with pytest.raises(InitFromError, match="'gone' is not installed.*--init-from none"):
        init_from_checkpoint(build_model(config), config, loaded.featurizer, "gone")


def test_a_product_build_is_never_a_fine_tuning_start(pretrained, tmp_path):
    """The product panel read every TDC table, test sets too (issue 68): refused by name."""
    path, loaded = pretrained
    ckpt = torch.load(path, weights_only=False)
    ckpt["graphnorm"]["train_config"] = {"pretrain": {"exclude_tdc": False, "tdc_tables": True}}
    product = tmp_path / "product.ckpt"
    torch.save(ckpt, product)
    config = dict(loaded.meta["model_config"], num_tasks=1)
    with pytest.raises(InitFromError, match="product build .*never saw a TDC molecule"):
        init_from_checkpoint(build_model(config), config, loaded.featurizer, product)
    # ... unless the run fits a column of the panel itself, and then the record says so
    info = init_from_checkpoint(build_model(config), config, loaded.featurizer, product,
                                panel_column="logd74")
    assert info["product_build"] is True and info["panel_column"] == "logd74"
    assert "product_build" not in init_from_checkpoint(build_model(config), config,
                                                       loaded.featurizer, path, panel_column="logd74")


def test_panel_column_is_a_config_file_setting_not_a_train_flag():
    """Only a config (the panel's own runs) lifts the refusal above; `train` has no flag for it."""
    from graphnorm.cli import build_parser

    assert TrainConfig.from_dict({"panel_column": "logd74"}).panel_column == "logd74"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--panel-column", "logd74"])


def test_backbone_lr_scales_the_copied_weights_and_zero_freezes_them(tiny_run, raw_dir, cache_root,
                                                                     tmp_path):
    from tiny_runs import tiny_config

    from graphnorm.train.init_from import HEAD_SIDE
    from graphnorm.train.module import param_groups
    from graphnorm.train.run import train

    source, _ = tiny_run
    before = load_checkpoint(source / "best.ckpt").model
    groups = param_groups(before, 0.01, 0.1)
    ids = [id(p) for ps, _, _ in groups for p in ps]
    assert sorted(ids) == sorted(id(p) for p in before.parameters())  # each once
    for ps, _, share in groups:
        names = [n for n, p in before.named_parameters() if any(p is q for q in ps)]
        assert all(n.startswith(HEAD_SIDE) == (share == 1.0) for n in names)

    frozen = train(tiny_config(raw_dir, cache_root, tmp_path / "frozen", max_epochs=1,
                               init_from=str(source), backbone_lr=0.0))
    after = load_checkpoint(tmp_path / "frozen" / "best.ckpt").model
    old, new = dict(before.named_parameters()), dict(after.named_parameters())
    copied = [n for n in old if not n.startswith(HEAD_SIDE)]
    assert copied and all(torch.equal(old[n], new[n]) for n in copied)
    assert frozen["config"]["backbone_lr"] == 0.0
    with pytest.raises(ValueError, match="applies to a fine-tuning run"):
        train(tiny_config(raw_dir, cache_root, tmp_path / "scratch", backbone_lr=0.5))
    assert not (tmp_path / "scratch").exists()
