#!/usr/bin/env bash
# A third lease on a GPU (the `device` tool): the levers the first two leases named
# (experiments/results/gpu/README.md: both recipes ran at 12-13 % SM use, launch-bound):
#   1. graphs/s of the fast recipe at batch 64, 256 and 1024 and of slim at 256, training and
#      eval-mode forwards, on pre-collated ZINC-subset batches already on the GPU
#      (bench_recipes.py);
#   2. the fast recipe on ZINC-subset at batch BATCH (lr LR) for FAST_TIME with loader workers,
#      beside the first lease's batch-64 run (H200, 130 s: test MAE 0.201), and the GPU's use;
#   3. last, bounded: slim under torch.compile (dynamic shapes). On the CPU the fast recipe's
#      compile breaks its graph at the data-dependent masks (random-walk PE, GINE) and did not
#      finish 4 steps in 200 s, so only slim is tried.
# Same carry and table as gpu_session.sh (experiments/gpu_carry.sh builds .gpu/).
#
#   run(command="bash experiments/gpu_batches.sh", carry=[".gpu"], timeout_s=480)
#   DEVICE=cpu FAST_TIME=15s STEPS=4 BATCHES=16 COMPILE_TIMEOUT=30 bash experiments/gpu_batches.sh  # dry run
OUT=${OUT:-/tmp/gpu_batches_out}
STEPS=${STEPS:-40}
BATCHES=${BATCHES:-64 256 1024}
BATCH=${BATCH:-256}
LR=${LR:-2.0e-3}  # batch 64's 1e-3 times sqrt(256 / 64)
WORKERS=${WORKERS:-8}
source experiments/gpu_setup.sh

configs=()
for b in $BATCHES; do
  sed "s/^batch_size: .*/batch_size: $b/" /tmp/gpu_fast.yaml > /tmp/gpu_fast_b$b.yaml
  configs+=(/tmp/gpu_fast_b$b.yaml)
done
run timeout 160 python3 experiments/bench_recipes.py --device "$DEVICE" --threads "$(nproc)" \
  --configs "${configs[@]}" /tmp/gpu_slim.yaml --infer --amp fp32 --steps "$STEPS" \
  --out "$OUT/batches_gpu.md"

(command -v nvidia-smi >/dev/null && nvidia-smi dmon -s um -d 5 > "$OUT/dmon.txt" 2>&1) &
DMON=$!
rm -rf /tmp/gpu_runs/fast_b$BATCH  # scratch: a rerun on the same machine starts over
sed -e "s/^batch_size: .*/batch_size: $BATCH/" -e "s/^lr: .*/lr: $LR/" /tmp/gpu_fast.yaml > /tmp/gpu_fast_run.yaml
run timeout 200 python3 -m graphnorm.cli train --config /tmp/gpu_fast_run.yaml \
  --max-time "$FAST_TIME" --num-workers "$WORKERS" --accelerator "${DEVICE%%:*}" \
  --out /tmp/gpu_runs/fast_b$BATCH --no-progress
cp /tmp/gpu_runs/fast_b$BATCH/metrics.json "$OUT/fast_b${BATCH}_metrics.json" 2>/dev/null
kill $DMON 2>/dev/null

run timeout "${COMPILE_TIMEOUT:-100}" python3 experiments/bench_recipes.py --device "$DEVICE" \
  --threads "$(nproc)" --configs /tmp/gpu_slim.yaml --compile --amp fp32 --steps "$STEPS" \
  --out "$OUT/compile_gpu.md"
log "done"
