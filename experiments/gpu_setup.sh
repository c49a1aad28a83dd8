#!/usr/bin/env bash
# Sourced by the scripts that run on a lent GPU (experiments/gpu_session.sh, gpu_batches.sh):
# installs the carried RDKit core and OGB (.gpu/, made by experiments/gpu_carry.sh) where the
# machine has none, unpacks ZINC-subset as a table, writes the fast and slim recipes reading it
# (/tmp/gpu_fast.yaml, /tmp/gpu_slim.yaml), and logs the machine. Reads OUT, DEVICE and
# FAST_TIME (defaults below); sets log and run.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
FAST_TIME=${FAST_TIME:-130s}
T0=$(date +%s)
log() { echo "[gpu_session +$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/log.txt"; }
run() { log "\$ $*"; "$@" 2>&1 | tee -a "$OUT/log.txt"; log "exit ${PIPESTATUS[0]}"; }

if ! python3 -c "import rdkit, ogb" 2>/dev/null; then
  mkdir -p /tmp/site && tar -xJf .gpu/rdkit_chem312.tar.xz -C /tmp/site \
    && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
gunzip -c .gpu/zinc_subset.csv.gz > /tmp/zinc_subset.csv
# the two recipes, reading the table instead of --dataset zinc-subset
python3 - <<'EOF'
import yaml
table = dict(data="/tmp/zinc_subset.csv", smiles_column="smiles", target_columns=["plogp"],
             split="column:split", task="regression", metric="mae")
for name in ("fast", "slim"):
    cfg = yaml.safe_load(open(f"experiments/configs/zinc_subset_{name}.yaml"))
    cfg.pop("dataset")
    yaml.safe_dump(cfg | table, open(f"/tmp/gpu_{name}.yaml", "w"))
EOF
log "git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
run nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv
run python3 -c "import torch, lightning, torch_geometric, rdkit, ogb; from rdkit import Chem; from ogb.utils import smiles2graph; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'lightning', lightning.__version__, 'pyg', torch_geometric.__version__, 'rdkit', rdkit.__version__, 'ogb', ogb.__version__); print(smiles2graph('c1ccccc1O')['num_nodes'], 'atoms in phenol')"

