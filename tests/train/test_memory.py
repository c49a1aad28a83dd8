"""graphnorm/train/memory.py: glibc is told to keep freed memory (the speed-up itself is
measured by experiments/bench_malloc.py; page-fault counts depend on the host's huge pages,
so no unit test times or counts them)."""
import sys

import pytest

from graphnorm.train.memory import hold_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_thresholds_are_accepted_on_glibc(monkeypatch):
    monkeypatch.delenv("GRAPHNORM_MALLOC", raising=False)
    assert hold_freed_memory() is True  # both mallopt calls succeeded


def test_opting_out_changes_nothing(monkeypatch):
    monkeypatch.setenv("GRAPHNORM_MALLOC", "default")
    assert hold_freed_memory() is False
