"""glibc is asked to return a batch's large blocks to the system (graphnorm/pretrain/memory.py)."""
import sys

import pytest

from graphnorm.pretrain import memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_glibc_takes_the_threshold():
    assert memory.return_large_blocks() is True


def test_without_glibc_nothing_is_asked(monkeypatch):
    monkeypatch.setattr(memory.sys, "platform", "darwin")
    assert memory.return_large_blocks() is False
    monkeypatch.setattr(memory.sys, "platform", "linux")

    def no_glibc(name):
        raise OSError(f"{name}: not found")

    monkeypatch.setattr(memory.ctypes, "CDLL", no_glibc)
    assert memory.return_large_blocks() is False
