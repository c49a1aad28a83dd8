#!/bin/bash
# One call on a lent GPU (the device tool): pre-training runs (ARMS, folders under .gpu/runs)
# continued side by side on the one GPU, ~7 minutes each, their last.ckpt (what the next call
# resumes from), best checkpoints and logs written to $OUT (8 files: the tool's limit).
#
# Prepared here (ignored folder .gpu/, carried): .gpu/corpus.npz (`python experiments/device.py pack`),
# .gpu/raw/{admet_corpus,tdc_admet_group} (copies of ../shared/datasets, deleted after),
# .gpu/cache/pretrain/tdc_keys-*.json, .gpu/site/ (ogb copied from the venv; rdkit: a stand-in
# that only satisfies imports, since the wheel would not fit), .gpu/runs/<arm>/ (pretrain.json, data.json and,
# to go on, the last.ckpt a former call brought back). Then:
#   device run: bash experiments/device_pretrain.sh   (carry: .gpu; timeout_s 600)
# Locally (a dry run on the CPU): DEVICE=cpu BUDGET=60 OUT=/tmp/out bash experiments/device_pretrain.sh
# A new run: .gpu/runs/<arm>/pretrain.json only (the spec; a folder without last.ckpt starts
# from step 0), e.g. ARMS=large WORKERS=14 EVAL_EVERY=1000.
set -u
T0=$(date +%s)
DEVICE=${DEVICE:-cuda}
BUDGET=${BUDGET:-560}   # seconds of the whole command; the tool allows 600
WORKERS=${WORKERS:-6}   # loader processes per arm (16 cores: 2 arms x (1 + 6) + unpack's)
ARMS=${ARMS:-$(ls .gpu/runs)}
EVAL_EVERY=${EVAL_EVERY:-2000}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/.gpu/site GRAPHNORM_RAW_DIR=$PWD/.gpu/raw GRAPHNORM_CACHE=$PWD/.gpu/cache
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv 2>/dev/null
python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
python3 experiments/device.py unpack --packed .gpu/corpus.npz --workers 16 || exit 1
left=$(( BUDGET - ($(date +%s) - T0) - 75 ))   # 75 s: each arm's set-up (~40 s) and last save
echo "training budget per arm: ${left} s (set-up took $(( $(date +%s) - T0 )) s)"
for arm in $ARMS; do
  mkdir -p "$OUT/$arm"
  python3 -m graphnorm.cli pretrain --out ".gpu/runs/$arm" --device "$DEVICE" \
    --loader-workers "$WORKERS" --threads 1 --max-time "${left}s" --eval-every "$EVAL_EVERY" \
    > "$OUT/$arm/train.log" 2>&1 &
done
wait
for arm in $ARMS; do
  cp ".gpu/runs/$arm/last.ckpt" ".gpu/runs/$arm/best.ckpt" ".gpu/runs/$arm/log.jsonl" "$OUT/$arm/"
  echo "== $arm"; tail -n 3 "$OUT/$arm/train.log" | cut -c1-400
done
echo "whole command: $(( $(date +%s) - T0 )) s"
