"""Per-graph sizes and targets read from storage (graphnorm.train.datamodule)."""
import torch
from torch.utils.data import Subset

from graphnorm.train.datamodule import _targets, graph_sizes


def _slow(ds):
    items = [ds[i] for i in range(len(ds))]
    return (torch.tensor([int(d.num_nodes) for d in items]),
            torch.cat([d.y.reshape(1, -1).float() for d in items]))


def test_sizes_and_targets_match_items(zinc_subset):
    train = zinc_subset["train"]
    for ds in (zinc_subset["val"], Subset(train, range(50, 90)), train[torch.tensor([7, 3, 3, 0])]):
        sizes, ys = _slow(ds)
        assert torch.equal(graph_sizes(ds), sizes)
        assert torch.equal(_targets(ds), ys)


def test_sizes_of_a_plain_list():
    from torch_geometric.data import Data

    ds = [Data(num_nodes=3, y=torch.tensor([1.0])), Data(num_nodes=5, y=torch.tensor([2.0]))]
    assert graph_sizes(ds).tolist() == [3, 5] and _targets(ds).tolist() == [[1.0], [2.0]]
