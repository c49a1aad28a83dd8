"""graphnorm/train/memory.py: glibc is told to keep freed memory, and the heap's free pages go
back to the system when asked (the speed-up itself is
measured by experiments/bench_malloc.py; page-fault counts depend on the host's huge pages,
so no unit test times or counts them)."""
import sys

import pytest

from graphnorm.train import memory
from graphnorm.train.memory import hold_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_thresholds_are_accepted_on_glibc(monkeypatch):
    monkeypatch.delenv("GRAPHNORM_MALLOC", raising=False)
    assert hold_freed_memory() is True  # both mallopt calls succeeded


def test_opting_out_changes_nothing(monkeypatch):
    monkeypatch.setenv("GRAPHNORM_MALLOC", "default")
    assert hold_freed_memory() is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_blocks_are_returned():
    blocks = [bytearray(100_000) for _ in range(2000)]  # 200 MB below the mmap threshold
    del blocks[::2]  # holes in the heap that no next allocation of another size fills
    assert memory.trim_heap() is True


@pytest.fixture
def uncached():
    memory._libc.cache_clear()  # the C library is looked up once per process
    yield
    memory._libc.cache_clear()


def test_without_glibc_nothing_is_asked(monkeypatch, uncached):
    monkeypatch.setattr(memory.sys, "platform", "darwin")
    assert memory.trim_heap() is False
    memory._libc.cache_clear()
    monkeypatch.setattr(memory.sys, "platform", "linux")

    def no_glibc(name):
        raise OSError(f"{name}: not found")

    monkeypatch.setattr(memory.ctypes, "CDLL", no_glibc)
    memory._libc.cache_clear()
    assert memory.trim_heap() is False


def test_the_heap_is_trimmed_every_so_many_steps(monkeypatch):
    from types import SimpleNamespace

    calls = []
    monkeypatch.setattr(memory, "trim_heap", lambda: calls.append(1) or True)
    callback = memory.heap_trim_callback(every=3)
    for step in range(1, 10):
        callback.on_train_batch_end(SimpleNamespace(global_step=step), None, None, None, 0)
    assert len(calls) == 3  # steps 3, 6 and 9
