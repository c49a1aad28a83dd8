"""A run killed mid-epoch resumes from last.ckpt; Lightning DDP trains on 2 CPU processes."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

GRAPHNORM = str(Path(sys.executable).with_name("graphnorm"))


def _cmd(raw_dir, cache_root, out, *extra):
    return [GRAPHNORM, "train", "--dataset", "zinc-subset", "--preset", "tiny", "--raw-dir", str(raw_dir),
            "--cache-root", str(cache_root), "--out", str(out), "--no-progress", "--threads", "1", *extra]


def _step_of(ckpt: Path) -> int:
    try:
        return int(torch.load(ckpt, weights_only=True, map_location="cpu")["global_step"])
    except Exception:  # being written right now
        return -1


@pytest.mark.slow
def test_killed_run_resumes_from_last_checkpoint(raw_dir, cache_root, zinc_subset, tmp_path):
    out = tmp_path / "run"
    args = ("--max-epochs", "2", "--limit-train", "1280", "--limit-eval", "64", "--batch-size", "32",
            "--checkpoint-every", "5", "--seed", "1")  # 40 steps per epoch
    proc = subprocess.Popen(_cmd(raw_dir, cache_root, out, *args), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    try:
        while time.time() < deadline and _step_of(out / "last.ckpt") < 10:
            assert proc.poll() is None, "training ended before it could be killed"
            time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # a real kill: no clean-up code runs
        proc.wait()
    killed_at = _step_of(out / "last.ckpt")
    assert 10 <= killed_at < 80, killed_at
    assert not (out / "metrics.json").exists()

    done = subprocess.run(_cmd(raw_dir, cache_root, out, *args, "--resume"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Restoring states from the checkpoint" in done.stderr + done.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["steps"] == 80 and metrics["epochs"] == 2
    assert metrics["resumes"] == [{"step": killed_at, "exact": True}]


@pytest.mark.slow
def test_ddp_two_cpu_processes(raw_dir, cache_root, zinc_subset, tmp_path):
    out = tmp_path / "ddp"
    done = subprocess.run(
        _cmd(raw_dir, cache_root, out, "--max-epochs", "1", "--limit-train", "256", "--limit-eval", "64",
             "--batch-size", "32", "--devices", "2", "--strategy", "ddp"),
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    log = done.stdout + done.stderr
    assert "distributed_backend=gloo" in log and "All distributed processes registered" in log
    metrics = json.loads((out / "metrics.json").read_text())
    # 256 graphs over 2 processes at batch 32: 4 optimizer steps each, not 8
    assert metrics["steps"] == 4
    # the reported scores cover the whole split, not rank 0's half
    from graphnorm.checkpoints import load_checkpoint
    from graphnorm.graph import collate_graphs

    val = [zinc_subset["val"][i] for i in range(64)]
    pred = load_checkpoint(out / "best.ckpt").predict_batch(collate_graphs(val))
    y = torch.cat([d.y for d in val])
    assert float((pred - y).abs().mean()) == pytest.approx(metrics["val_mae"], rel=1e-4)


@pytest.mark.slow
def test_ddp_reproduces_single_process_training(raw_dir, cache_root, zinc_subset, tmp_path):
    """Without dropout and batch statistics (norm ln), 2 ranks x 16 graphs must train exactly
    as 1 process x 32: same size-sorted global batches, averaged gradients, same schedule."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("norm: ln\ndropout: 0.0\nattention_dropout: 0.0\nlr: 1.0e-3\n")
    common = ("--config", str(cfg), "--max-epochs", "2", "--limit-train", "200", "--limit-eval", "48")
    runs = {}
    for name, extra in (("single", ("--batch-size", "32")),
                        ("ddp", ("--batch-size", "16", "--devices", "2", "--strategy", "ddp"))):
        out = tmp_path / name
        done = subprocess.run(_cmd(raw_dir, cache_root, out, *common, *extra),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[name] = json.loads((out / "metrics.json").read_text())
    assert runs["single"]["steps"] == runs["ddp"]["steps"] == 2 * 7  # ceil(200 / 32) per epoch
    for key in ("val_mae", "test_mae"):
        assert runs["ddp"][key] == pytest.approx(runs["single"][key], rel=1e-4), key
