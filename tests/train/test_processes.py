"""Worker processes of `benchmark --jobs` / `train --ensemble --jobs` end with their parent."""
import subprocess
import sys
import textwrap
import time

import pytest

# a parent that starts a worker (which sleeps a minute), prints the worker's pid, and dies
PARENT = textwrap.dedent("""
    import multiprocessing as mp, os, time
    from graphnorm.train.processes import die_with_parent

    def worker():
        die_with_parent()
        time.sleep(60)

    if __name__ == "__main__":
        p = mp.get_context("spawn").Process(target=worker)
        p.start()
        time.sleep(3)  # the worker has called die_with_parent
        print(p.pid, flush=True)
        os._exit(0)  # no join, no cleanup: as if killed
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.slow  # starts processes
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_worker_dies_with_its_parent(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout.split()[0])
    deadline = time.time() + 10
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the worker outlived its parent"


def test_a_worker_refuses_a_run_queued_by_a_parent_that_has_ended(monkeypatch):
    import multiprocessing

    from graphnorm.train import processes
    from graphnorm.train.config import TrainConfig

    class Ended:
        def is_alive(self):
            return False

    monkeypatch.setattr(multiprocessing, "parent_process", lambda: Ended())
    with pytest.raises(RuntimeError, match="has ended"):
        processes.train_run(TrainConfig(out="runs/x"))
