"""graphnorm/pretrain/datamodule.py: an epoch's order cut into batches, epochs counted by the
sampler itself, and a resumed epoch that leaves out exactly the batches already trained."""
import numpy as np

from graphnorm.pretrain.datamodule import EpochOrderBatches


def _order(epoch: int) -> np.ndarray:
    return np.random.default_rng(epoch).permutation(10)


def test_each_iteration_is_the_next_epochs_order_in_batches():
    batches = EpochOrderBatches(_order, n=10, batch_size=4, seed=0)
    assert len(batches) == 3  # a short last batch counts
    first, second = list(batches), list(batches)
    assert [len(b) for b in first] == [4, 4, 2]
    assert sum(first, []) == _order(0).tolist() and sum(second, []) == _order(1).tolist()
    assert batches.epoch == 2


def test_a_resumed_epoch_skips_the_trained_batches_once():
    straight = EpochOrderBatches(_order, 10, 4, 0)
    whole = [list(straight), list(straight)]
    resumed = EpochOrderBatches(_order, 10, 4, 0)
    resumed.epoch, resumed.skip = divmod(4, len(resumed))  # 4 steps trained: epoch 1, batch 1
    assert list(resumed) == whole[1][1:]
    assert list(resumed) == [b.tolist() for b in np.array_split(_order(2), [4, 8])]
