#!/usr/bin/env bash
# Regenerates the committed benchmark results (experiments/results/{zinc-subset,ogbg-molhiv}).
# Checkpoints stay in bench/ (git-ignored); summaries, per-run metrics.json and learning
# curves are copied next to this script's results. Usage:
#   GRAPHNORM_RAW_DIR=../shared/datasets bash experiments/run_results.sh zinc|molhiv
# JOBS=2 trains two one-thread runs at once (one per core); BENCH and DEST override the run
# and result directories.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
case "${1:-zinc}" in
  zinc)
    NAME=zinc-subset; EPOCHS=${EPOCHS:-15}; SEEDS=${SEEDS:-3}
    NORMS=${NORMS:-ln,sep:bn+ln,sep:bn+bn}
    CMD=("$BIN/graphnorm" benchmark --config experiments/configs/zinc_subset_cpu.yaml
         --seeds "$SEEDS" --max-epochs "$EPOCHS" --no-progress --threads 1) ;;
  molhiv)
    # CPU budget: 21 runs in about an hour of one core: tiny preset, one epoch
    NAME=ogbg-molhiv; EPOCHS=${EPOCHS:-1}; SEEDS=${SEEDS:-3}; PRESET=${PRESET:-tiny}
    NORMS=${NORMS:-ln,bn,sep:bn+ln,sep:bn+bn,sep:ln+ln,sep:ln+bn,isobn}
    CMD=("$BIN/graphnorm" benchmark --config experiments/configs/molhiv.yaml
         --seeds "$SEEDS" --max-epochs "$EPOCHS" --no-progress --threads 1
         --preset "$PRESET" --lr 1e-3) ;;
  *) echo "usage: $0 zinc|molhiv" >&2; exit 2 ;;
esac
BENCH=${BENCH:-bench/$NAME}
DEST=${DEST:-experiments/results/$NAME}
JOBS=${JOBS:-1}
echo "${CMD[*]} --norms $NORMS --out $BENCH --jobs $JOBS"
"${CMD[@]}" --norms "$NORMS" --out "$BENCH" --jobs "$JOBS"
mkdir -p "$DEST"
cp $BENCH/summary.* "$DEST/"
for d in $BENCH/runs/*/seed*; do
  run=$(basename "$(dirname "$d")")-$(basename "$d")
  mkdir -p "$DEST/runs/$run"
  cp "$d/metrics.json" "$DEST/runs/$run/"
  [ -f "$d/learning_curve.png" ] && cp "$d/learning_curve.png" "$DEST/runs/$run/"
done
printf '%s\n' "${CMD[*]} --norms $NORMS --out $BENCH --jobs $JOBS" > "$DEST/COMMAND"
echo "results in $DEST"
