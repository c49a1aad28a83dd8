"""The TDC suite refuses a network that may have seen a TDC molecule (issue 68): only a
checkpoint whose pre-training record left every TDC molecule out starts or feeds a TDC run."""
from types import SimpleNamespace

import pytest
import torch

from graphnorm.bench.tdc_clean import check_tdc_clean, tdc_refusal


def _with_record(source, dest, record):
    ckpt = torch.load(source, weights_only=True)
    ckpt["graphnorm"]["train_config"] = record
    torch.save(ckpt, dest)
    return dest


@pytest.fixture(scope="module")
def checkpoints(tiny_run, tmp_path_factory):
    run, _ = tiny_run
    folder = tmp_path_factory.mktemp("records")
    best = run / "best.ckpt"
    return {"trained": best,
            "clean": _with_record(best, folder / "clean.ckpt", {"pretrain": {"exclude_tdc": True}}),
            "kept": _with_record(best, folder / "kept.ckpt", {"pretrain": {"exclude_tdc": False}})}


def test_only_a_pretraining_that_left_tdc_out_is_clean(checkpoints):
    assert tdc_refusal(str(checkpoints["clean"])) is None
    assert "TDC molecules kept" in tdc_refusal(str(checkpoints["kept"]))
    # a model trained by `train` on some table: its history cannot be shown clean
    assert "does not record" in tdc_refusal(str(checkpoints["trained"]))


def test_the_shipped_backbone_is_clean():
    assert tdc_refusal("admet") is None


@pytest.mark.parametrize("field", ["init_from", "feature_backbone"])
def test_either_way_in_is_refused_by_name(checkpoints, field):
    cfg = SimpleNamespace(init_from=None, feature_backbone=None)
    setattr(cfg, field, str(checkpoints["kept"]))
    flag = "--" + field.replace("_", "-")
    with pytest.raises(ValueError, match=f"tdc-admet: {flag} .*kept.ckpt"):
        check_tdc_clean(cfg)
    setattr(cfg, field, str(checkpoints["clean"]))
    check_tdc_clean(cfg)  # accepted
    check_tdc_clean(SimpleNamespace(init_from=None, feature_backbone=None))  # nothing read
