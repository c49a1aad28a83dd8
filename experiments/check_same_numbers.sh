#!/usr/bin/env bash
# Same commands, same numbers (issue 34, "No behaviour changes"; issue 57): a tiny
# deterministic ZINC-subset training and the TDC suite's default (--recipe admet: a Graphormer
# and the gbm member, 5 seeds) on one task, run at a base commit (before the restructuring)
# and at this checkout, then every val_/test_ number and prediction file compared.
# TDC=gbm runs the gbm benchmark instead (`--models gbm`, what issue 34 compared).
# A checkout with the test ledger scores test only with --final: HEAD_FLAGS passes it there
# (e.g. HEAD_FLAGS="--final --ledger /tmp/same_numbers/ledger.csv").
#
#   experiments/check_same_numbers.sh [BASE] [WORK]      (BASE: e18f462, WORK: /tmp/same_numbers)
#   PHASES="base head" (default), one of them to rerun half, "" to compare only; COMPARE=0
#   skips the comparison.
# Needs GRAPHNORM_RAW_DIR (zinc, tdc_admet_group) and the project's python as $PYTHON.
set -euo pipefail
BASE=${1:-e18f462}
WORK=${2:-/tmp/same_numbers}
PHASES=${PHASES-base head}
PY=${PYTHON:-python}
HERE=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
export OMP_NUM_THREADS=1 PYTHONHASHSEED=0

run_at() {  # $1: label, $2: source tree; run inside it: `python -m` puts the cwd first on sys.path
    local out="$WORK/$1"
    rm -rf "$out/zinc" "$out/dili"
    mkdir -p "$out"
    cd "$2"
    git rev-parse HEAD > "$out/sha"
    PYTHONPATH="$2" "$PY" -c "import graphnorm; print(graphnorm.__file__)" > "$out/imported"
    grep -qx "$2/graphnorm/__init__.py" "$out/imported"  # the tree under test, nothing else
    PYTHONPATH="$2" "$PY" -m graphnorm.cli train --dataset zinc-subset --preset tiny \
        --max-epochs 2 --limit-train 256 --limit-eval 128 --seed 0 --threads 1 --no-progress \
        --cache-root "$out/cache" --out "$out/zinc" > "$out/zinc.log" 2>&1
    local what=(--recipe admet)
    [ "${TDC:-default}" = gbm ] && what=(--models gbm)
    PYTHONPATH="$2" "$PY" -m graphnorm.cli benchmark --suite tdc-admet --tasks dili "${what[@]}" \
        --seeds 5 --threads 1 --jobs 1 --no-progress --cache-root "$out/cache" \
        --out "$out/dili" $3 > "$out/dili.log" 2>&1
    cd - > /dev/null
}

for phase in $PHASES; do
    if [ "$phase" = base ]; then
        [ -d "$WORK/src-$BASE" ] || git -C "$HERE" worktree add --detach "$WORK/src-$BASE" "$BASE"
        run_at base "$WORK/src-$BASE" ""
    else
        run_at head "$HERE" "${HEAD_FLAGS:-}"
    fi
done

[ "${COMPARE:-1}" = 0 ] || "$PY" - "$WORK" <<'PY'
"""Every val_/test_ number of every metrics.json, base vs head: equal to the last bit?"""
import gzip, json, sys
from pathlib import Path

work = Path(sys.argv[1])

def numbers(root):
    out = {}
    for path in sorted(root.rglob("metrics.json")):
        record = json.loads(path.read_text())
        for key, value in record.items():
            if key.startswith(("val_", "test_")) and isinstance(value, (int, float)):
                out[f"{path.parent.relative_to(root).as_posix()}:{key}"] = value
    return out

base, head = numbers(work / "base"), numbers(work / "head")
for side in ("base", "head"):
    print(f"{side} {(work / side / 'sha').read_text().strip()}: graphnorm from "
          f"{(work / side / 'imported').read_text().strip()}")
print(f"{'run:number':64s} {'base':>22s} {'head':>22s} same")
for key in sorted(base.keys() | head.keys()):
    b, h = base.get(key), head.get(key)
    print(f"{key:64s} {b!r:>22} {h!r:>22} {'yes' if b == h else 'NO'}")
differ = [k for k in base.keys() | head.keys() if base.get(k) != head.get(k)]
print(f"{len(base)} numbers, {len(differ)} differ")
# and every prediction file, row by row (decompressed: gzip headers carry a time stamp)
files = sorted(p.relative_to(work / "base") for p in (work / "base").rglob("predictions_*.csv.gz"))
unequal = [f for f in files if not (work / "head" / f).is_file() or gzip.decompress(
    (work / "base" / f).read_bytes()) != gzip.decompress((work / "head" / f).read_bytes())]
print(f"{len(files)} prediction files, {len(unequal)} differ{': ' if unequal else ''}"
      + ", ".join(map(str, unequal)))
sys.exit(1 if differ or unequal or not base else 0)
PY
