#!/usr/bin/env bash
# The [VNode] embeddings of trained models: uniformity, spectrum, explained variance.
# Runs after the benchmark tutorial (bench/norms), on the test split of its dataset.
set -euo pipefail
LIMIT=${LIMIT:-}     # the tests: "--limit 64" graphs per split

# one checkpoint, drawn beside a second one
graphnorm analyze --checkpoint bench/norms/runs/sep-bn-ln/seed0/best.ckpt \
    --compare bench/norms/runs/ln/seed0/best.ckpt --out an/pair $LIMIT

# the same model on every row of a file of your own molecules
graphnorm analyze --checkpoint bench/norms/runs/sep-bn-ln/seed0/best.ckpt --data new.csv \
    --out an/new

# every finished run of a benchmark: mean ± std per variant, paired against ln
graphnorm analyze --bench bench/norms --out an/bench $LIMIT
