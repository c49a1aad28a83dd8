#!/usr/bin/env bash
# One call on a lent GPU (the `device` tool of this workplace): what graphnorm does on a GPU.
#   1. training and eval-mode graphs/s of the fast and slim recipes (bench_recipes.py, fp32
#      and bf16 autocast) on pre-collated ZINC-subset batches;
#   2. the fast recipe on ZINC-subset for FAST_TIME (its LR schedule spans the budget);
#   3. the slim (paper) recipe for SLIM_TIME: its 400k-step schedule does not fit a call, so
#      this run is a measured start, resumed from last.ckpt by later calls (SLIM_RESUME=1 with
#      runs/gpu_slim/last.ckpt in place, SLIM_TIME the cumulative budget);
#   4. `graphnorm predict` of PREDICT_ROWS ZINC molecules on the GPU and on the CPU.
# The machine has no RDKit/OGB and no internet, and a call carries at most 64 MiB with the
# repository, so .gpu/ (git-ignored, carried) holds RDKit's Chem core alone (rdchem, rdmolfiles,
# rdmolops and the libraries they load; made by experiments/gpu_carry.sh), the OGB wheels, and
# ZINC-subset as a table (SMILES, the penalized logP label, the official split: 856 kB; the ZINC
# labels themselves need RDKit's descriptors and Contrib, which do not fit). So the runs read it
# through `--data` (OGB atom features, 9 columns) where `--dataset zinc-subset` reads the
# 28-type ZINC vocabulary: same molecules, labels and split, another input encoding.
#
#   run(command="bash experiments/gpu_session.sh", carry=[".gpu"], timeout_s=570)
#   DEVICE=cpu FAST_TIME=20s SLIM_TIME=20s PREDICT_ROWS=200 STEPS=4 bash experiments/gpu_session.sh  # dry run
OUT=${OUT:-/tmp/gpu_session_out}
SLIM_TIME=${SLIM_TIME:-130s}
PREDICT_ROWS=${PREDICT_ROWS:-5000}
STEPS=${STEPS:-50}
WORKERS=${WORKERS:-8}
RUNS=${RUNS:-runs}  # a dry run writes elsewhere, so a carried runs/gpu_slim stays as it is
source experiments/gpu_setup.sh

# 1. throughput (batches pre-collated and on the device)
run timeout 170 python3 experiments/bench_recipes.py --device "$DEVICE" --threads "$(nproc)" \
  --configs /tmp/gpu_fast.yaml /tmp/gpu_slim.yaml \
  --infer --amp fp32 bf16 --steps "$STEPS" --out "$OUT/recipes_gpu.md"

# GPU utilization beside the trainings, every 5 s
(command -v nvidia-smi >/dev/null && nvidia-smi dmon -s um -d 5 > "$OUT/dmon.txt" 2>&1) &
DMON=$!

# 2. the fast recipe, its schedule over the budget
run timeout 260 python3 -m graphnorm.cli train --config /tmp/gpu_fast.yaml \
  --max-time "$FAST_TIME" --num-workers "$WORKERS" --accelerator "${DEVICE%%:*}" --out "$RUNS"/gpu_fast --no-progress
cp "$RUNS"/gpu_fast/metrics.json "$OUT/fast_metrics.json" 2>/dev/null

# 3. the slim recipe: the paper's schedule, as far as the budget goes
RESUME=""; [ "${SLIM_RESUME:-0}" = 1 ] && RESUME="--resume"
run timeout 260 python3 -m graphnorm.cli train --config /tmp/gpu_slim.yaml \
  --max-time "$SLIM_TIME" --num-workers "$WORKERS" --accelerator "${DEVICE%%:*}" --out "$RUNS"/gpu_slim --no-progress $RESUME
cp "$RUNS"/gpu_slim/metrics.json "$OUT/slim_metrics.json" 2>/dev/null
cp "$RUNS"/gpu_slim/last.ckpt "$OUT/slim_last.ckpt" 2>/dev/null
kill $DMON 2>/dev/null

# 4. predict: the fast run's checkpoint on PREDICT_ROWS ZINC training molecules
head -n $(( PREDICT_ROWS + 1 )) /tmp/zinc_subset.csv | cut -d, -f1 > /tmp/predict_in.csv
JOBS=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
for spec in "$DEVICE 1" "cpu 1" "cpu $JOBS"; do
  set -- $spec
  rm -f /tmp/predict_out.csv
  t=$(date +%s.%N)
  timeout 120 python3 -m graphnorm.cli predict --checkpoint "$RUNS"/gpu_fast --input /tmp/predict_in.csv \
    --output /tmp/predict_out.csv --device "$1" --jobs "$2" --batch-size 256 >> "$OUT/log.txt" 2>&1
  rc=$?
  s=$(python3 -c "print(f'{$(date +%s.%N) - $t:.1f}')")
  log "predict device=$1 jobs=$2 rows=$PREDICT_ROWS: ${s} s wall (exit $rc, process start and model load included)" \
    | tee -a "$OUT/predict.txt"
done
log "done"
