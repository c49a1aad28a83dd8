#!/usr/bin/env bash
# One call on a lent GPU (the `device` tool of this workplace): what graphnorm does on a GPU.
#   1. training and eval-mode graphs/s of the fast and slim recipes (bench_recipes.py, fp32
#      and bf16 autocast) on pre-collated ZINC-subset batches;
#   2. the fast recipe on ZINC-subset for FAST_TIME (its LR schedule spans the budget);
#   3. the slim (paper) recipe for SLIM_TIME: its 400k-step schedule does not fit a call, so
#      this run is a measured start, resumed from last.ckpt by later calls (SLIM_RESUME=1 with
#      runs/gpu_slim/last.ckpt in place, SLIM_TIME the cumulative budget);
#   4. `graphnorm predict` of PREDICT_ROWS ZINC molecules on the GPU and on the CPU.
# The machine has no RDKit/OGB and no internet: .gpu/ (git-ignored, carried) holds a slimmed
# RDKit (its Chem core; drawing, reactions, 3D and data files left out), the OGB wheels and the
# ZINC raw files. Outputs land in $OUT (the files the tool brings back) and the run folders.
#
#   run(command="bash experiments/gpu_session.sh", carry=[".gpu"], timeout_s=570)
#   DEVICE=cpu FAST_TIME=20s SLIM_TIME=20s PREDICT_ROWS=200 STEPS=4 bash experiments/gpu_session.sh  # dry run
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_session_out}
mkdir -p "$OUT"
DEVICE=${DEVICE:-cuda}
FAST_TIME=${FAST_TIME:-130s}
SLIM_TIME=${SLIM_TIME:-130s}
PREDICT_ROWS=${PREDICT_ROWS:-5000}
STEPS=${STEPS:-50}
WORKERS=${WORKERS:-8}
T0=$(date +%s)
log() { echo "[gpu_session +$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/log.txt"; }
run() { log "\$ $*"; "$@" 2>&1 | tee -a "$OUT/log.txt"; log "exit ${PIPESTATUS[0]}"; }

if [ -f .gpu/rdkit_min.tar.xz ] && ! python3 -c "import rdkit" 2>/dev/null; then
  mkdir -p /tmp/site && tar -xJf .gpu/rdkit_min.tar.xz -C /tmp/site \
    && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export GRAPHNORM_RAW_DIR=${GRAPHNORM_RAW_DIR:-$PWD/.gpu/datasets}
log "git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
run nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv
run python3 -c "import torch, lightning, torch_geometric, rdkit, ogb; from rdkit import Chem; from ogb.utils import smiles2graph; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'lightning', lightning.__version__, 'pyg', torch_geometric.__version__, 'rdkit', rdkit.__version__, 'ogb', ogb.__version__); print(smiles2graph('c1ccccc1O')['num_nodes'], 'atoms in phenol')"

# 1. throughput (batches pre-collated and on the device)
run timeout 170 python3 experiments/bench_recipes.py --device "$DEVICE" --threads "$(nproc)" \
  --configs experiments/configs/zinc_subset_fast.yaml experiments/configs/zinc_subset_slim.yaml \
  --infer --amp fp32 bf16 --steps "$STEPS" --out "$OUT/recipes_gpu.md"

# GPU utilization beside the trainings, every 5 s
(command -v nvidia-smi >/dev/null && nvidia-smi dmon -s um -d 5 > "$OUT/dmon.txt" 2>&1) &
DMON=$!

# 2. the fast recipe, its schedule over the budget
run timeout 260 python3 -m graphnorm.cli train --config experiments/configs/zinc_subset_fast.yaml \
  --max-time "$FAST_TIME" --num-workers "$WORKERS" --accelerator "${DEVICE%%:*}" --out runs/gpu_fast --no-progress
cp runs/gpu_fast/metrics.json "$OUT/fast_metrics.json" 2>/dev/null

# 3. the slim recipe: the paper's schedule, as far as the budget goes
RESUME=""; [ "${SLIM_RESUME:-0}" = 1 ] && RESUME="--resume"
run timeout 260 python3 -m graphnorm.cli train --config experiments/configs/zinc_subset_slim.yaml \
  --max-time "$SLIM_TIME" --num-workers "$WORKERS" --accelerator "${DEVICE%%:*}" --out runs/gpu_slim --no-progress $RESUME
cp runs/gpu_slim/metrics.json "$OUT/slim_metrics.json" 2>/dev/null
cp runs/gpu_slim/last.ckpt "$OUT/slim_last.ckpt" 2>/dev/null
kill $DMON 2>/dev/null

# 4. predict: the fast run's checkpoint on PREDICT_ROWS ZINC training molecules
python3 - "$PREDICT_ROWS" <<'EOF'
import gzip, os, sys
raw = os.environ["GRAPHNORM_RAW_DIR"] + "/zinc/"
rows = gzip.open(raw + "jtvae_train.txt.gz", "rt").read().split()
open("/tmp/predict_in.smi", "w").write("\n".join(rows[: int(sys.argv[1])]) + "\n")
EOF
JOBS=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
for spec in "$DEVICE 1" "cpu 1" "cpu $JOBS"; do
  set -- $spec
  rm -f /tmp/predict_out.csv
  t=$(date +%s.%N)
  timeout 120 python3 -m graphnorm.cli predict --checkpoint runs/gpu_fast --input /tmp/predict_in.smi \
    --output /tmp/predict_out.csv --device "$1" --jobs "$2" --batch-size 256 >> "$OUT/log.txt" 2>&1
  rc=$?
  s=$(python3 -c "print(f'{$(date +%s.%N) - $t:.1f}')")
  log "predict device=$1 jobs=$2 rows=$PREDICT_ROWS: ${s} s wall (exit $rc, process start and model load included)" \
    | tee -a "$OUT/predict.txt"
done
log "done"
