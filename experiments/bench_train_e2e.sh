#!/usr/bin/env bash
# End-to-end `graphnorm train` speed on this machine: one process with 2 threads vs two DDP
# processes with 1 thread each, the same global batch of 256 (DDP: 128 per rank), 2 epochs of
# ZINC-subset with experiments/configs/zinc_subset_cpu.yaml. Prints the training-loop graphs/s
# (all ranks) and the run's wall time from each metrics.json.
#   GRAPHNORM_RAW_DIR=../shared/datasets bash experiments/bench_train_e2e.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
OUT=${1:-bench/train_e2e}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
rm -rf "$OUT"
COMMON=(--config experiments/configs/zinc_subset_cpu.yaml --max-epochs 2 --seed 0 --no-progress)
"$BIN/graphnorm" train "${COMMON[@]}" --threads 2 --out "$OUT/one_process_2_threads" >/dev/null 2>&1
"$BIN/graphnorm" train "${COMMON[@]}" --threads 1 --devices 2 --strategy ddp --batch-size 128 \
  --out "$OUT/ddp_2_processes_1_thread" >/dev/null 2>&1
echo "| setup | train graphs/s | optimizer steps | run wall time (s) | val MAE after 2 epochs |"
echo "|---|---|---|---|---|"
for d in one_process_2_threads ddp_2_processes_1_thread; do
  "$BIN/python" - "$OUT/$d/metrics.json" "$d" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {m['train_graphs_per_s']:.0f} | {m['steps']} | {m['wall_time_s']:.0f} | {m['val_mae']:.3f} |")
PY
done
