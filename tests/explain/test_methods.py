"""Attribution methods on hand-built checkpoints (random weights): shapes, completeness of
integrated gradients, occlusion = the real prediction change, rollout's recomputed attention."""
import pytest
import torch
import torch.nn.functional as F

from graphnorm.checkpoints import load_checkpoint
from graphnorm.explain.methods import (METHODS, attention_probs, attention_rollout,
                                       check_method, integrated_gradients, model_output,
                                       occlusion)
from graphnorm.explain.sites import captured_attention
from graphnorm.nn.packing import TokenPacking
from graphnorm.inference.predict import Predictor
from tiny_checkpoint import write_checkpoint

SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CN"]
MODELS = ["graphormer", "gine", "gin-vn"]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain-models")
    out = {m: load_checkpoint(write_checkpoint(root / m / "best.ckpt", model=m,
                                               targets=("a", "b"))) for m in MODELS}
    out["binary"] = load_checkpoint(write_checkpoint(root / "binary" / "best.ckpt",
                                                     task_type="binary", targets=("active",)))
    out["sum-readout"] = load_checkpoint(write_checkpoint(
        root / "sum" / "best.ckpt", readout="vnode+sum", rwpe_steps=4, local_mp="gine"))
    return out


def batch_of(model, smiles=SMILES):
    graphs, errors = Predictor(model).featurize(smiles)
    assert not any(errors)
    _, batch = next(Predictor(model, batch_size=len(graphs)).batches(graphs))
    return batch


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("method", ["ig", "occlusion"])
def test_shapes_and_padding(loaded, name, method):
    m = loaded[name]
    batch = batch_of(m)
    fn = integrated_gradients if method == "ig" else occlusion
    scores = fn(m, batch)
    B, N = batch.node_mask.shape
    assert scores.shape == (B, N, 2)
    assert torch.all(scores[~batch.node_mask] == 0)
    assert torch.isfinite(scores).all() and scores[batch.node_mask].abs().sum() > 0


@pytest.mark.parametrize("name", MODELS + ["binary", "sum-readout"])
def test_integrated_gradients_completeness(loaded, name):
    """sum_i IG_i = F(e) - F(0) (Sundararajan et al. 2017, Prop. 1), up to the midpoint rule."""
    m = loaded[name]
    batch = batch_of(m)
    ig = integrated_gradients(m, batch, steps=64)
    with torch.no_grad():
        delta = model_output(m, batch) - model_output(m, batch, lambda e: torch.zeros_like(e))
    assert delta.abs().max() > 1  # a test that cannot pass trivially
    torch.testing.assert_close(ig.sum(1), delta, rtol=2e-2, atol=5e-2)


def test_integrated_gradients_converge_with_steps(loaded):
    m = loaded["graphormer"]
    batch = batch_of(m)
    with torch.no_grad():
        delta = model_output(m, batch) - model_output(m, batch, lambda e: 0 * e)
    errors = [(integrated_gradients(m, batch, s).sum(1) - delta).abs().max() for s in (2, 64)]
    assert errors[1] < errors[0]


@pytest.mark.parametrize("name", MODELS + ["sum-readout"])
def test_occlusion_is_the_real_prediction_change(loaded, name):
    """Blanking atom j through the hook = the model run on a batch whose atom j has all-zero
    (padding) features, which its atom encoder maps to the zero vector; nothing else changes."""
    m = loaded[name]
    batch = batch_of(m)
    scores = occlusion(m, batch)
    with torch.no_grad():
        full = m.model(batch)
        for b, j in [(0, 0), (1, 2), (2, 3), (3, 1)]:
            x = batch.x.clone()
            x[b, j] = 0
            changed = type(batch)(**{**batch.__dict__, "x": x})
            out = m.model(changed)
            expected = (full[b] - out[b]) * m.target_std
            torch.testing.assert_close(scores[b, j], expected, rtol=1e-4, atol=1e-4)


def test_attention_probs_reproduce_each_block(loaded):
    """The recomputed probabilities give the block's actual attention output."""
    m = loaded["graphormer"]
    batch = batch_of(m)
    store, outputs = [], []
    hooks = [blk.attn.register_forward_hook(lambda mod, a, out: outputs.append(out))
             for blk in m.model.transformer.blocks]
    with torch.no_grad(), captured_attention(m.model, store):
        m.model(batch)
    for h in hooks:
        h.remove()
    assert len(store) == len(outputs) == 2
    for (attn, x, bias, pad), out in zip(store, outputs):
        probs = attention_probs(attn, x, bias, pad)  # [B, H, L, L]
        B, L, D = x.shape
        v = F.linear(x, attn.qkv.weight, attn.qkv.bias).view(B, L, 3, attn.heads, -1)[:, :, 2]
        y = (probs @ v.transpose(1, 2)).transpose(1, 2).reshape(B, L, D)
        # the blocks' tokens travel packed: the [VNode]s, then the real atoms
        packing = TokenPacking(batch.token_padding_mask)
        torch.testing.assert_close(packing.pack(F.linear(y, attn.out.weight, attn.out.bias)), out,
                                   rtol=1e-4, atol=1e-5)


def test_rollout_is_a_share_of_the_vnode_flow(loaded):
    m = loaded["graphormer"]
    batch = batch_of(m)
    r = attention_rollout(m, batch)
    assert r.shape == (*batch.node_mask.shape, 2)
    assert torch.equal(r[..., 0], r[..., 1])  # the same for every target
    assert torch.all(r >= 0) and torch.all(r[~batch.node_mask] == 0)
    assert torch.all(r[..., 0].sum(1) < 1)  # the rest stays at the [VNode] itself
    assert attention_rollout(loaded["sum-readout"], batch_of(loaded["sum-readout"])).shape[-1] == 1


def test_rollout_refused_for_gnns(loaded):
    with pytest.raises(ValueError, match="rollout needs a Graphormer"):
        check_method("rollout", loaded["gine"])
    with pytest.raises(ValueError, match="unknown attribution method"):
        check_method("saliency", loaded["graphormer"])
    assert METHODS == ("ig", "occlusion", "rollout")


def test_binary_attributions_are_logits(loaded):
    """Classification: F is the logit, so scores are not bounded by probabilities."""
    m = loaded["binary"]
    batch = batch_of(m)
    with torch.no_grad():
        logit = model_output(m, batch)
        prob = m.predict_batch(batch)
    torch.testing.assert_close(torch.sigmoid(logit), prob)
