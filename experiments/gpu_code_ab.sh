#!/usr/bin/env bash
# A fourth lease on a GPU (the `device` tool): did sessions 33-34's CPU speed-ups cost the GPU?
# Packed tokens (graphnorm/nn/packing.py) and the attention bias built once per kind of atom
# pair (AttentionBias.distinct_pairs: a torch.unique whose size the host must read) were
# measured on the CPU only. Here bench_recipes.py times the fast recipe at batch 64 and 256 and
# slim at 256 (training steps and eval-mode forwards, pre-collated ZINC-subset batches on the
# GPU) on the code before them (dafb7d49, carried as .gpu/before/graphnorm) and on the working
# tree, alternating, ROUNDS rounds, one machine. The second call added the working tree with
# the pairs grouped by kind forced on (`--group-pairs on`, as session 34 shipped it; the
# working tree now groups them on the CPU only).
# Same carry and table as gpu_session.sh (experiments/gpu_carry.sh builds .gpu/), plus
#   mkdir -p .gpu/before && git archive dafb7d49 graphnorm | tar -x -C .gpu/before
#
#   run(command="bash experiments/gpu_code_ab.sh", carry=[".gpu"], timeout_s=480)
#   DEVICE=cpu STEPS=4 ROUNDS=1 bash experiments/gpu_code_ab.sh  # dry run
OUT=${OUT:-/tmp/gpu_code_ab_out}
STEPS=${STEPS:-40}
ROUNDS=${ROUNDS:-2}
source experiments/gpu_setup.sh
set -o pipefail
sed "s/^batch_size: .*/batch_size: 256/" /tmp/gpu_fast.yaml > /tmp/gpu_fast_b256.yaml
for r in $(seq "$ROUNDS"); do
  for code in before after grouped; do
    pp=$PYTHONPATH; [ "$code" = before ] && pp=$PWD/.gpu/before:$PYTHONPATH
    extra=(); [ "$code" = grouped ] && extra=(--group-pairs on)  # the working tree as session 34 left it
    # the code timed must be the code named (from the repository root, python -c finds its graphnorm first)
    (cd / && env PYTHONPATH="$pp" python3 -c "import graphnorm, sys; f = graphnorm.__file__; print('$code:', f); sys.exit(('.gpu/before' in f) != ('$code' == 'before'))" 2>&1) | tee -a "$OUT/log.txt" || continue
    run env PYTHONPATH="$pp" timeout 200 python3 experiments/bench_recipes.py --device "$DEVICE" \
      --threads "$(nproc)" --configs /tmp/gpu_fast.yaml /tmp/gpu_fast_b256.yaml /tmp/gpu_slim.yaml \
      --infer --amp fp32 --steps "$STEPS" "${extra[@]}" --out "$OUT/ab_${code}_r$r.md"
  done
done
log "done"
