"""Every JSON file under experiments/results/ is strict JSON: no NaN or Infinity, which
Python writes by default and strict readers (browsers' JSON.parse, jq, Go, Rust) reject."""
import json
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[2] / "experiments" / "results"


def strict_loads(text: str):
    def refuse(token: str):
        raise ValueError(f"{token} is not JSON (write null)")

    return json.loads(text, parse_constant=refuse)


def test_strict_parser_refuses_what_python_writes_for_nan():
    assert strict_loads('{"a": null, "b": 1.5}') == {"a": None, "b": 1.5}
    for bad in ('{"a": NaN}', "[Infinity]", "[-Infinity]"):
        with pytest.raises(ValueError, match="is not JSON"):
            strict_loads(bad)


def test_every_committed_result_json_is_strict():
    files = sorted(RESULTS.rglob("*.json"))
    assert len(files) > 100  # the results tree is there, or this test checks nothing
    bad = []
    for path in files:
        try:
            strict_loads(path.read_text(encoding="utf-8"))
        except ValueError as err:
            bad.append(f"{path.relative_to(RESULTS)}: {err}")
    assert not bad, "not strict JSON:\n" + "\n".join(bad)
