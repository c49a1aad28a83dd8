"""Per-step CPU cost of pre-training models measured side by side (graphnorm/pretrain/step_cost.py)."""
from graphnorm.pretrain.spec import PretrainSpec
from graphnorm.pretrain.step_cost import norm_specs, step_costs

SMILES = [f"c1ccc(cc1){'C' * k}O" for k in range(1, 17)] + [f"C1CCNCC1{'C' * k}N" for k in range(1, 17)]


def test_each_model_gets_a_cost_and_a_larger_one_costs_more():
    small = PretrainSpec(num_layers=1, hidden=16, ffn_hidden=16, batch_size=8)
    specs = norm_specs(small, ["ln", "sep:bn+bn"])
    assert [s.norm for s in specs.values()] == ["ln", "sep:bn+bn"]
    specs["large"] = PretrainSpec.from_dict({**small.to_dict(), "num_layers": 4, "hidden": 64,
                                            "ffn_hidden": 128})
    costs = step_costs(specs, SMILES)
    assert set(costs) == {"ln", "sep:bn+bn", "large"} and min(costs.values()) > 0
    assert costs["large"] > costs["ln"]
