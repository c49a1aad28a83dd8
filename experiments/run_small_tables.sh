#!/usr/bin/env bash
# The small-table benchmark (experiments/results/small_tables/README.md): on each table, the
# default command's model (no recipe flags: `--recipe auto` = small-table) against the
# Morgan-count random forest and GIN-VN, on 5 random 80/10/10 splits (repeat k: split seed k,
# model seed k). Two runs at a time, one thread each. Finished runs are skipped on a rerun.
#   GRAPHNORM_RAW_DIR=../shared/datasets bash experiments/run_small_tables.sh [table ...]
set -euo pipefail
cd "$(dirname "$0")/.."
RAW="${GRAPHNORM_RAW_DIR:-../shared/datasets}"
GN="${GN:-.venv/bin/graphnorm}"
OUT=experiments/results/small_tables
[ -f data/derived/small/molhiv_3k.csv ] || .venv/bin/python experiments/make_small_tables.py --raw-dir "$RAW" --out data/derived/small
COMMON=(--split random --repeats 5 --models graphormer,rf,gin-vn --jobs 2 --threads 1 --no-progress)
run() {  # name, file, target, extra flags
  local name=$1 file=$2 target=$3; shift 3
  $GN benchmark --data "$file" --target-columns "$target" "${COMMON[@]}" "$@" --out "$OUT/$name/default"
}
tables=("${@:-freesolv zinc_logp_noisy_1k zinc_qed_2k molhiv_3k}")
for t in ${tables[@]}; do
  case $t in
    freesolv) run freesolv "$RAW/small/freesolv.csv" expt ;;
    zinc_logp_noisy_1k) run "$t" "data/derived/small/$t.csv" logp_noisy ;;
    zinc_qed_2k) run "$t" "data/derived/small/$t.csv" qed ;;
    molhiv_3k) run "$t" "data/derived/small/$t.csv" HIV_active --task classification ;;
  esac
done
