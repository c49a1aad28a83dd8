"""Packed tokens (graphnorm.nn.packing): layout, gradients, and the blocks on them."""
import torch

from graphnorm.nn import TransformerEncoder
from graphnorm.nn.packing import TokenPacking


def _padding():
    lengths = torch.tensor([4, 1, 3])  # ordinary tokens per sequence (position 0 special)
    return torch.arange(5)[None, :] > lengths[:, None]  # [B, L], True = padding


def test_layout_is_specials_then_tokens_in_row_major_order():
    packing = TokenPacking(_padding())
    dense = torch.arange(3 * 5, dtype=torch.float64).view(3, 5, 1)
    packed = packing.pack(dense).squeeze(1).tolist()
    assert packed == [0, 5, 10, 1, 2, 3, 4, 6, 11, 12, 13]
    assert packing.specials == 3 and packing.lengths().tolist() == [4, 1, 3]
    back = packing.unpack(packing.pack(dense))
    torch.testing.assert_close(back[~_padding()], dense[~_padding()])
    assert back[_padding()].abs().sum() == 0
    torch.testing.assert_close(packing.token_sum(packing.pack(dense)),
                               torch.tensor([[1. + 2 + 3 + 4], [6.], [11. + 12 + 13]], dtype=torch.float64))


def test_gradients_flow_through_pack_and_unpack():
    packing = TokenPacking(_padding())
    dense = torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda d: packing.unpack(packing.pack(d) * 2), (dense,))


def test_encoder_on_packed_tokens_equals_the_padded_one():
    """Same stack, same seed: packed and padded agree in train mode (batch statistics,
    dropout masks drawn on the padded shape) and in evaluation."""
    pad = _padding()
    torch.manual_seed(0)
    enc = TransformerEncoder(8, 2, 2, 16, norm="sep:bn+ln", dropout=0.2, input_dropout=0.1).double()
    x = torch.randn(3, 4, 8, dtype=torch.float64)
    special = torch.randn(1, 1, 8, dtype=torch.float64)
    packing = TokenPacking(pad)
    for training in (True, False):
        enc.train(training)
        state = {k: v.clone() for k, v in enc.state_dict().items()}
        torch.manual_seed(1)
        padded = enc(x, pad[:, 1:], special=special)
        enc.load_state_dict(state)
        torch.manual_seed(1)
        packed = enc(x[~pad[:, 1:]], special=special, packing=packing)
        torch.testing.assert_close(packed, packing.pack(padded))
