"""The shared core reproduces the three encoders it replaced, bit for bit in float64.

``tests/fixtures/core_v1.pt`` was written by ``experiments/check_core_equivalence.py save``
from the code before the refactor: state dicts in the OLD key layout (Graphormer blocks with
``qkv``/``ffn1``, text ``norm1``/``mlp.0``, ViT ``attn.proj``/``norm``), inputs, outputs.
"""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "check_core_equivalence.py"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("check_core_equivalence", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.check()


@pytest.mark.parametrize("case", ["graph_gps", "graph_sep", "text_post", "text_pre", "vit", "mae"])
def test_old_state_dict_gives_the_same_numbers(report, case):
    """Old checkpoints load (key migration) and give the same eval and train-mode outputs,
    gradients, and the same seeded initial parameters."""
    diffs = report[case]
    for quantity in ("init", "eval", "train", "grads"):
        assert diffs[quantity] <= 1e-10, (case, quantity, diffs)


@pytest.mark.parametrize("case", ["graph_gps", "graph_sep", "vit", "mae"])
def test_parameter_order_is_kept(report, case):
    """Optimizer states of old Graphormer / ViT checkpoints (indexed by position) still fit."""
    assert report[case]["order"] == 0
