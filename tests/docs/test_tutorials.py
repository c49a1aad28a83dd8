"""The tutorials' code runs: each script under docs/tutorials/scripts/ (included verbatim in
its page) is executed on a 150-row table with tiny settings, in the order the pages build on
each other, so a renamed flag or a changed output breaks this test, not a reader.

`graphnorm` lines run in this process (`graphnorm.cli.main`: no second torch import per
command); the scripts are plain bash for readers, and `bash -n` checks them. The runner
accepts only what the scripts use (comments, `set`, `NAME=${NAME:-default}`, `graphnorm ...`),
so a script cannot grow a line that is not run here.
"""
import contextlib
import gzip
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow  # the tutorials, some in their own processes

SCRIPTS = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "scripts"
QUICK = "--preset tiny --max-steps 5 --no-progress"
_ASSIGN = re.compile(r"^(\w+)=\$\{\1:-([^}]*)\}\s*(#.*)?$")
_VAR = re.compile(r"\$\{?(\w+)\}?")


@contextlib.contextmanager
def inside(folder: Path):
    here = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def run_script(name: str, cwd: Path, **env) -> None:
    """Run a tutorial script line by line; ``env`` sets its variables (else their defaults)."""
    script = SCRIPTS / name
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0, f"{name}: bash syntax"
    values = {}
    for line in script.read_text().replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == "set -euo pipefail":
            continue
        assign = _ASSIGN.match(line)
        if assign:
            values[assign[1]] = env.get(assign[1], assign[2])
            continue
        argv = shlex.split(_VAR.sub(lambda m: values[m[1]], line), comments=True)
        assert argv[0] == "graphnorm", f"{name}: the runner does not know {line!r}"
        _graphnorm(argv[1:], cwd)


def _graphnorm(argv, cwd: Path) -> None:
    if "ddp" in argv:  # Lightning's DDP re-launches the command: it needs a real process
        cmd = [sys.executable, "-m", "graphnorm.cli", *argv]
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert done.returncode == 0, done.stderr[-3000:]
        return
    from graphnorm.cli import main

    started = time.time()
    with inside(cwd):
        assert main(argv) == 0, argv
    print(f"[tutorial] {time.time() - started:.1f} s: graphnorm {' '.join(argv)}")


@pytest.fixture(scope="module")
def workdir(raw_dir, cache_root, tmp_path_factory, monkeypatch_module):
    """mols.csv (id, smiles, Y = Crippen logP; 150 ZINC molecules) and new.csv (50 more)."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    with gzip.open(raw_dir / "zinc" / "jtvae_test.txt.gz", "rt") as f:
        smiles = [line.strip() for _, line in zip(range(200), f)]
    table = pd.DataFrame({"id": [f"Z{k}" for k in range(200)], "smiles": smiles,
                          "Y": [round(Descriptors.MolLogP(Chem.MolFromSmiles(s)), 3)
                                for s in smiles]})
    out = tmp_path_factory.mktemp("tutorials")
    table[:150].to_csv(out / "mols.csv", index=False)
    table[150:][["id", "smiles"]].to_csv(out / "new.csv", index=False)
    # the CLI finds data and cache as the other tests do (ZINC-subset is featurized once)
    monkeypatch_module.setenv("GRAPHNORM_CACHE", str(cache_root))
    monkeypatch_module.setenv("GRAPHNORM_RAW_DIR", str(raw_dir))
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_own_table(workdir, monkeypatch_module):
    # hpopt samples lengths up to 3,000 steps and presets up to "fast": tiny ones here
    from graphnorm.train import hpopt
    monkeypatch_module.setitem(hpopt.SEARCH_SPACE, "max_steps", ("choice", [5]))
    monkeypatch_module.setitem(hpopt.SEARCH_SPACE, "preset", ("choice", ["tiny"]))
    run_script("own_table.sh", workdir, QUICK=QUICK, TRIALS="--trials 1", REPEATS="1")

    preds = pd.read_csv(workdir / "preds.csv")
    assert len(preds) == 50 and preds["error"].isna().all()
    assert (preds["prediction_lo"] < preds["prediction"]).all()
    assert (preds["prediction"] < preds["prediction_hi"]).all()
    emb = pd.read_csv(workdir / "emb.csv")
    assert len(emb) == 50 and "vnode_0" in emb.columns
    assert (workdir / "runs/search/best.yaml").is_file()
    summary = json.loads((workdir / "bench/mine/summary.json").read_text())
    assert summary, "empty benchmark summary"
    assert {"rf", "gin-vn"} <= {p.name for p in (workdir / "bench/mine/runs").iterdir()}


def test_benchmark_norms_then_analysis(workdir, zinc_subset):
    run_script("benchmark_norms.sh", workdir, DATA="--dataset zinc-subset", SEEDS="2",
               EPOCHS="1", JOBS="1",
               QUICK="--preset tiny --limit-train 64 --limit-eval 32 --no-progress")
    for folder in ("bench/norms", "bench/norms_b128"):
        assert (workdir / folder / "summary.md").is_file()
    assert json.loads((workdir / "compare.json").read_text())
    run_script("analysis.sh", workdir, LIMIT="--limit 64")
    assert (workdir / "an/bench/summary.md").is_file()
    assert any((workdir / "an/pair").iterdir()) and any((workdir / "an/new").iterdir())


def test_fine_tuning(workdir):
    with inside(workdir):
        runpy.run_path(str(SCRIPTS / "pretrain_table.py"), run_name="__main__")
    assert len(pd.read_csv(workdir / "pretrain.csv")) == 200
    run_script("fine_tuning.sh", workdir, QUICK=QUICK)
    assert json.loads((workdir / "runs/pre/metrics.json").read_text())
    assert list((workdir / "runs/fine").glob("model_*/init_from.json")) or \
        (workdir / "runs/fine/init_from.json").is_file()


@pytest.mark.slow  # four processes start torch: ~30 s of the file's ~70 s
def test_multiprocess(workdir):
    run_script("multiprocess.sh", workdir, QUICK=QUICK)
    assert json.loads((workdir / "runs/ddp/metrics.json").read_text())["steps"] >= 1
    assert len(list((workdir / "runs/ens2").glob("model_*/best.ckpt"))) == 2


def test_api_tour(workdir, zinc_subset):
    """The API page's snippet, on the own-table tutorial's runs."""
    with inside(workdir):
        runpy.run_path(str(SCRIPTS / "api_tour.py"), run_name="__main__")
