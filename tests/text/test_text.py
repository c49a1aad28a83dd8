"""Tests of the text adapters: encoder shapes, padding invariance, all norm specs, HF conversion."""
from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from graphnorm.norms import NORM_SPECS, BatchNorm
from graphnorm.text import (
    HFSepNorm, TextClassifier, TextEncoder, VectorIsoBN, add_isobn_head, calibrate_batchnorm,
    sepnorm_convert,
)

V, D = 50, 32
# Padding-invariance checks run in float64, where reduction-order rounding (~1e-16) stays
# far below this bound while a real leak of pads into BN statistics moves outputs by >1e-3.
F64_ATOL = 1e-9


def _batch(B=4, L=10, seed=0, pad_id=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, V, (B, L), generator=g)
    ids[:, 0] = 1  # [CLS]
    lengths = torch.tensor([L, L - 3, 4, 2][:B])
    pad = torch.arange(L)[None] >= lengths[:, None]
    ids[pad] = pad_id
    return ids, pad


def _model(norm, pre_norm=False, isobn_head=False, seed=0):
    torch.manual_seed(seed)
    enc = TextEncoder(V, dim=D, depth=2, heads=4, max_len=32, type_vocab_size=2, norm=norm,
                      pre_norm=pre_norm, dropout=0.0)
    return TextClassifier(enc, num_classes=3, isobn_head=isobn_head, dropout=0.0)


def test_shapes_and_default_mask():
    model = _model("sep:bn+ln")
    ids, pad = _batch()
    hidden = model.encoder(ids)  # mask derived from pad_id = 0
    assert hidden.shape == (4, 10, D)
    assert torch.equal(model.encoder.padding_mask_for(ids, None), pad)
    assert model(ids, pad, torch.zeros_like(ids)).shape == (4, 3)
    assert model.cls_embedding(ids, pad).shape == (4, D)


@pytest.mark.parametrize("norm,isobn_head", [
    ("ln", False), ("sep:bn+ln", False), ("sep:bn+bn", False), ("isobn", False),
    ("sep:isobn+ln", False), ("sep:bn+ln", True), ("ln", True),
])
@pytest.mark.parametrize("pre_norm", [False, True])
def test_real_tokens_ignore_padding(norm, isobn_head, pre_norm):
    """Real-token outputs (and logits) are the same whatever the pad ids and pad length.

    In float64: the property is exact, but in float32 batch statistics summed over a
    different number of (masked) positions differ by rounding (~1e-7 relative), which two
    BN/IsoBN layers amplify past 1e-5 for some library versions and thread counts."""
    model = _model(norm, pre_norm, isobn_head).double()
    ids, pad = _batch(L=10)
    # Other pad ids, and 7 extra pad columns of random ids.
    ids2 = ids.clone()
    ids2[pad] = torch.randint(2, V, (int(pad.sum()),))
    extra = torch.randint(2, V, (ids.shape[0], 7))
    ids3 = torch.cat([ids2, extra], 1)
    pad3 = torch.cat([pad, torch.ones(ids.shape[0], 7, dtype=torch.bool)], 1)
    outs = []
    for x, m in ((ids, pad), (ids2, pad), (ids3, pad3)):
        model.train()  # batch statistics: the hardest case for padding leaks
        m_copy = copy.deepcopy(model)  # identical running statistics for every call
        h = m_copy.encoder(x, m)[:, :10]
        logits = m_copy.head(m_copy.encoder(x, m))
        outs.append((h.masked_fill(pad[..., None], 0.0), logits))
    for h, logits in outs[1:]:
        torch.testing.assert_close(h, outs[0][0], atol=F64_ATOL, rtol=0)
        torch.testing.assert_close(logits, outs[0][1], atol=F64_ATOL, rtol=0)


def test_padding_leak_would_be_detected():
    """Sanity check of the test above: without the mask BN statistics do see the pads."""
    model = _model("sep:bn+ln").train()
    ids, pad = _batch()
    ids2 = ids.clone()
    ids2[pad] = torch.randint(2, V, (int(pad.sum()),))
    a = copy.deepcopy(model).encoder(ids, torch.zeros_like(pad))
    b = copy.deepcopy(model).encoder(ids2, torch.zeros_like(pad))
    assert (a[~pad] - b[~pad]).abs().max() > 1e-3


@pytest.mark.parametrize("norm", NORM_SPECS)
@pytest.mark.parametrize("pre_norm", [False, True])
def test_every_spec_forward_backward(norm, pre_norm):
    model = _model(norm, pre_norm, isobn_head=True).train()
    ids, pad = _batch()
    loss = nn.functional.cross_entropy(model(ids, pad), torch.tensor([0, 1, 2, 0]))
    loss.backward()
    assert torch.isfinite(loss)
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    model.eval()
    assert torch.isfinite(model(ids, pad)).all()


def test_reset_parameters_restores_init():
    model = _model("sep:bn+ln", isobn_head=True).train()
    ids, pad = _batch()
    model(ids, pad).sum().backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    model.reset_parameters()
    bn = model.encoder.transformer.blocks[0].attn_norm.special
    assert isinstance(bn, BatchNorm) and torch.equal(bn.weight, torch.ones(D))
    assert torch.equal(bn.running_mean, torch.zeros(D)) and int(bn.num_batches_tracked) == 0
    assert model.encoder.tok.weight.std() < 0.05  # back to N(0, 0.02)
    assert int(model.head.isobn.iso.num_batches_tracked) == 0


@pytest.mark.parametrize("pre_norm", [False, True])
def test_constant_cls_gets_ln(pre_norm):
    """The norm that sees the constant [CLS] embedding uses LN for [CLS]; the others do not."""
    enc = _model("sep:bn+ln", pre_norm).encoder
    first = enc.transformer.blocks[0].attn_norm if pre_norm else enc.transformer.emb_norm
    assert first.spec == "sep:ln+ln"
    assert enc.transformer.blocks[0].ffn_norm.spec == "sep:bn+ln" and enc.transformer.blocks[1].attn_norm.spec == "sep:bn+ln"
    assert _model("bn", pre_norm).encoder.transformer.blocks[0].attn_norm.spec == "bn"


@pytest.mark.parametrize("constant_cls_ln", [True, False])
def test_constant_cls_train_eval_gap(constant_cls_ln):
    """BN on the constant [CLS] embedding: eval output jumps after a small drift; LN does not."""
    torch.manual_seed(0)
    enc = TextEncoder(V, dim=D, depth=1, max_len=32, norm="sep:bn+ln",
                      constant_cls_ln=constant_cls_ln).train()
    ids = torch.randint(2, V, (16, 6))
    ids[:, 0] = 1
    with torch.no_grad():
        emb = enc.tok(ids) + enc.pos(torch.arange(6))  # what the embedding norm sees
        emb_norm = enc.transformer.emb_norm
        for _ in range(200):  # running variance of the constant [CLS] decays to ~0
            emb_norm(emb)
        emb[:, 0] += 0.01  # the [CLS] embedding moves a little, as during training
        gap = (emb_norm(emb)[:, 0] - emb_norm.eval()(emb)[:, 0]).abs().max().item()
    assert (gap < 1e-4) if constant_cls_ln else (gap > 1.0)


def test_isobn_head_applies_isobn():
    model = _model("ln", isobn_head=True).train()
    assert isinstance(model.head.isobn, VectorIsoBN)
    ids, pad = _batch()
    model(ids, pad)
    assert int(model.head.isobn.iso.num_batches_tracked) == 1


# ---------------------------------------------------------------- Hugging Face conversion


def _hf(kind, task=False, **overrides):
    transformers = pytest.importorskip("transformers")
    cfg_cls = transformers.BertConfig if kind == "bert" else transformers.RobertaConfig
    cfg = cfg_cls(vocab_size=V, hidden_size=D, num_hidden_layers=3, num_attention_heads=4,
                  intermediate_size=64, max_position_embeddings=40, pad_token_id=0,
                  layer_norm_eps=1e-3, num_labels=3, **overrides)
    name = ("Bert" if kind == "bert" else "Roberta") + ("ForSequenceClassification" if task else "Model")
    torch.manual_seed(0)
    model = getattr(transformers, name)(cfg).eval()
    # Non-trivial LN affine, so an uncopied weight/bias makes the exactness test fail.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.normal_(1.0, 0.3), m.bias.normal_(0.0, 0.3)
    return model


def _hf_out(model, ids, attn):
    out = model(input_ids=ids, attention_mask=attn)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


@pytest.mark.parametrize("kind", ["bert", "roberta"])
@pytest.mark.parametrize("task", [False, True])
def test_hf_sepnorm_ln_ln_is_exact(kind, task):
    model = _hf(kind, task)
    ids, pad = _batch(L=12)
    attn = (~pad).long()
    ref = _hf_out(model, ids, attn)
    conv = sepnorm_convert(copy.deepcopy(model), "sep:ln+ln")
    assert (ref - _hf_out(conv, ids, attn)).abs().max().item() <= 1e-6


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_hf_conversion_count(kind):
    model = _hf(kind, task=True)
    n_before = sum(isinstance(m, nn.LayerNorm) for m in model.modules())
    ln_weight = model.base_model.encoder.layer[0].output.LayerNorm.weight.detach().clone()
    conv = sepnorm_convert(model, "sep:bn+bn")
    expected = 1 + 2 * model.config.num_hidden_layers
    assert len(conv.sepnorm_converted) == expected
    wrappers = [n for n, m in conv.named_modules() if isinstance(m, HFSepNorm)]
    assert len(wrappers) == expected
    left = [n for n, m in conv.named_modules() if isinstance(m, nn.LayerNorm)
            and not any(n.startswith(w + ".") for w in wrappers)]
    assert len(left) == n_before - expected
    base = conv.base_model
    # constant [CLS] in the embeddings keeps an LN channel; all layer norms are sep:bn+bn
    assert base.embeddings.LayerNorm.norm.spec == "sep:ln+bn"
    assert sorted(set(conv.sepnorm_converted.values())) == ["sep:bn+bn", "sep:ln+bn"]
    # bn channel: affine and eps copied from the LN
    bn = base.encoder.layer[0].output.LayerNorm.norm.special
    assert isinstance(bn, BatchNorm) and bn.eps == 1e-3
    torch.testing.assert_close(bn.weight, ln_weight, rtol=0, atol=0)
    all_bn = sepnorm_convert(_hf(kind), "sep:bn+bn", constant_cls_ln=False)
    assert all_bn.embeddings.LayerNorm.norm.spec == "sep:bn+bn"
    with pytest.raises(RuntimeError):
        sepnorm_convert(conv)


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_hf_bn_statistics_skip_padding(kind):
    """The attention-mask hook keeps pads out of BN statistics in a converted HF model."""
    model = _hf(kind, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    conv = sepnorm_convert(model, "sep:bn+bn").train().double()  # exact property: float64
    ids, pad = _batch(L=12)
    ids2 = ids.clone()
    ids2[pad] = torch.randint(2, V, (int(pad.sum()),))
    ids3 = torch.cat([ids2, torch.randint(2, V, (4, 5))], 1)
    pad3 = torch.cat([pad, torch.ones(4, 5, dtype=torch.bool)], 1)
    outs = [copy.deepcopy(conv)(x, (~m).long()).last_hidden_state[:, :12]
            for x, m in ((ids, pad), (ids2, pad), (ids3, pad3))]
    for h in outs[1:]:
        torch.testing.assert_close(h[~pad], outs[0][~pad], atol=F64_ATOL, rtol=0)
    # mask cleared after the call, and without an attention mask the pads do count
    assert conv.base_model._sepnorm_context.padding_mask is None
    leak = copy.deepcopy(conv)(ids2).last_hidden_state
    assert (leak[~pad] - outs[0][~pad]).abs().max() > 1e-3


def test_hf_calibrate_and_isobn_head():
    model = _hf("bert", task=True)
    conv = add_isobn_head(sepnorm_convert(model, "sep:bn+ln"))
    ids, pad = _batch(L=12)
    batches = [{"input_ids": ids, "attention_mask": (~pad).long()}] * 2
    calibrate_batchnorm(conv, batches)
    bn = conv.base_model.encoder.layer[0].output.LayerNorm.norm.special
    assert int(bn.num_batches_tracked) == 2 and not bn.training and not conv.training
    assert bn.running_mean.abs().sum() > 0
    assert isinstance(conv.classifier[0], VectorIsoBN)
    conv.train()
    logits = conv(input_ids=ids, attention_mask=(~pad).long()).logits
    assert logits.shape == (4, 3) and torch.isfinite(logits).all()
    # calibration re-estimates every batch-statistics norm, the IsoBN head too (2 batches)
    assert int(conv.classifier[0].iso.num_batches_tracked) == 3
    rob = add_isobn_head(_hf("roberta", task=True))
    assert isinstance(rob.classifier.out_proj[0], VectorIsoBN)
