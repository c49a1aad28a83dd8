#!/usr/bin/env bash
# Regenerates the committed benchmark results (experiments/results/{zinc-subset,ogbg-molhiv}).
# Checkpoints stay in bench/ (git-ignored); summaries, per-run metrics.json and learning
# curves are copied next to this script's results. Usage:
#   GRAPHNORM_RAW_DIR=../shared/datasets bash experiments/run_results.sh zinc|molhiv
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
case "${1:-zinc}" in
  zinc)
    NAME=zinc-subset; EPOCHS=${EPOCHS:-15}; SEEDS=${SEEDS:-2}
    NORMS=${NORMS:-ln,sep:bn+ln,sep:bn+bn}
    CMD=("$BIN/graphnorm" benchmark --config experiments/configs/zinc_subset_cpu.yaml
         --norms "$NORMS" --seeds "$SEEDS" --max-epochs "$EPOCHS" --out "bench/$NAME" --no-progress --threads 1) ;;
  molhiv)
    # CPU budget: 21 runs in about an hour of one core: tiny preset, one epoch
    NAME=ogbg-molhiv; EPOCHS=${EPOCHS:-1}; SEEDS=${SEEDS:-3}; PRESET=${PRESET:-tiny}
    NORMS=${NORMS:-ln,bn,sep:bn+ln,sep:bn+bn,sep:ln+ln,sep:ln+bn,isobn}
    CMD=("$BIN/graphnorm" benchmark --config experiments/configs/molhiv.yaml
         --norms "$NORMS" --seeds "$SEEDS" --max-epochs "$EPOCHS" --out "bench/$NAME" --no-progress --threads 1
         --preset "$PRESET" --lr 1e-3) ;;
  *) echo "usage: $0 zinc|molhiv" >&2; exit 2 ;;
esac
echo "${CMD[*]}"
"${CMD[@]}"
DEST=experiments/results/$NAME
mkdir -p "$DEST"
cp bench/$NAME/summary.* "$DEST/"
for d in bench/$NAME/runs/*/seed*; do
  run=$(basename "$(dirname "$d")")-$(basename "$d")
  mkdir -p "$DEST/runs/$run"
  cp "$d/metrics.json" "$DEST/runs/$run/"
  [ -f "$d/learning_curve.png" ] && cp "$d/learning_curve.png" "$DEST/runs/$run/"
done
printf '%s\n' "${CMD[*]}" > "$DEST/COMMAND"
echo "results in $DEST"
