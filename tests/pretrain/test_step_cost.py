"""Per-step CPU cost of pre-training models measured side by side (graphnorm/pretrain/step_cost.py)."""
from graphnorm.pretrain.spec import PretrainSpec
import pytest

from graphnorm.pretrain.step_cost import model_specs, step_costs

SMILES = [f"c1ccc(cc1){'C' * k}O" for k in range(1, 17)] + [f"C1CCNCC1{'C' * k}N" for k in range(1, 17)]


def test_each_model_gets_a_cost_and_a_larger_one_costs_more():
    small = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=8)
    specs = model_specs(small, ["ln", "sep:bn+bn", "ln@4x64"])
    assert [s.norm for s in specs.values()] == ["ln", "sep:bn+bn", "ln"]
    assert (specs["ln"].num_layers, specs["ln"].hidden) == (1, 16)
    large = specs["ln@4x64"]
    assert (large.num_layers, large.hidden, large.ffn_hidden, large.batch_size) == (4, 64, 128, 8)
    costs = step_costs(specs, SMILES)
    assert set(costs) == {"ln", "sep:bn+bn", "ln@4x64"} and min(costs.values()) > 0
    assert costs["ln@4x64"] > costs["ln"]


@pytest.mark.parametrize("label", ["ln@6", "ln@6xwide", "ln@0x64", "ln@1x2x3x4"])
def test_a_malformed_size_names_itself(label):
    with pytest.raises(ValueError, match="a size is LAYERSxWIDTH"):
        model_specs(PretrainSpec(), [label])


def test_an_explicit_ffn_width_is_kept():
    assert model_specs(PretrainSpec(), ["ln@6x96x300"])["ln@6x96x300"].ffn_hidden == 300


def test_a_head_with_descriptors_is_measured_with_them():
    small = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=8)
    specs = model_specs(small, ["ln", "ln/fast", "ln@2x16/none"])
    assert [s.descriptors for s in specs.values()] == [False, "fast", False]
    assert model_specs(PretrainSpec(descriptors="fast"), ["ln"])["ln"].descriptors == "fast"
    costs = step_costs(specs, SMILES)  # one featurized set of batches serves both heads
    assert set(costs) == {"ln", "ln/fast", "ln@2x16/none"} and min(costs.values()) > 0
    with pytest.raises(ValueError, match="descriptors are /none, /fast, /rdkit2d"):
        model_specs(small, ["ln/morgan"])
    with pytest.raises(ValueError, match="one descriptor set at a time"):
        step_costs(model_specs(small, ["ln/fast", "ln/rdkit2d"]), SMILES)
