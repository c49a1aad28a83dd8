"""A run folder held by another process (graphnorm.run_folder.hold_run), for tests."""
import contextlib
import subprocess
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def held_elsewhere(folder: Path, flag: Path):
    """While inside, a separate Python process holds ``folder``'s run lock; it is killed on
    exit (the kernel then releases the lock: nothing stale is left)."""
    code = ("import pathlib, time\nfrom graphnorm.run_folder import hold_run\n"
            f"with hold_run({str(folder)!r}):\n    pathlib.Path({str(flag)!r}).write_text('held')\n"
            "    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.time() + 60
        while not flag.exists():
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("the holding process did not take the lock")
            time.sleep(0.05)
        yield proc
    finally:
        proc.kill()
        proc.wait()
