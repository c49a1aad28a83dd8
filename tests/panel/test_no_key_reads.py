"""No module outside graphnorm.panel reads panel.json's keys: the records are the contract
(a key renamed in the file is then one edit, not a hunt through ten modules)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "graphnorm"
# keys only a panel file has (an endpoint's or the panel's); "task", "kind" and "score" are
# shared with other records (boosters' rows, metrics), so they are not looked for
PANEL_KEYS = {"n_select", "score_select", "halfwidth", "ece_uncalibrated", "platt", "judged",
              "readouts_sha256", "readout_rule", "checkpoint_sha256", "centroids",
              "held_out_molecules", "selection_molecules"}


def _key_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        key = None
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant)):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if key in PANEL_KEYS:
            found.append(f"{path}:{node.lineno} reads {key!r}")
    return found


def test_only_the_panel_package_reads_panel_keys():
    reads = [r for path in PKG.rglob("*.py") if "panel" != path.parent.name
             for r in _key_reads(path)]
    assert reads == []


def test_the_check_sees_a_key_read_and_not_a_write(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f(panel, out):\n    out['platt'] = 1\n"
                    "    return panel['checkpoint_sha256'], panel.get('platt')\n")
    reads = _key_reads(path)
    assert sorted(r.rsplit(" ", 1)[-1] for r in reads) == ["'checkpoint_sha256'", "'platt'"]
