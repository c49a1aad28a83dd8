#!/usr/bin/env bash
# Norm variants side by side on an OGB dataset: every (norm, seed) is a training run.
# DATA picks the data (the tests: a 150-row table); SEEDS, EPOCHS and JOBS the budget.
set -euo pipefail
DATA=${DATA:---dataset ogbg-molhiv}
SEEDS=${SEEDS:-5}
EPOCHS=${EPOCHS:-8}
JOBS=${JOBS:-2}       # runs trained at once, one process with one thread each
QUICK=${QUICK:-}

# ShareNorm (ln) against SepNorm with BatchNorm (sep:bn+ln) and with LayerNorm (sep:ln+ln)
# at the [VNode]: summary.{md,csv,json,png} pair every variant with ln seed by seed
graphnorm benchmark $DATA --norms ln,sep:bn+ln,sep:ln+ln --seeds $SEEDS --max-epochs $EPOCHS \
    --jobs $JOBS --out bench/norms $QUICK

# the same variants with larger batches and BatchNorm in the final norm only
graphnorm benchmark $DATA --norms ln,sep:bn+ln --sep-slots final --batch-size 128 \
    --seeds $SEEDS --max-epochs $EPOCHS --jobs $JOBS --out bench/norms_b128 $QUICK

# two recipes' runs of one variant, paired by seed
graphnorm compare bench/norms_b128/runs/sep-bn-ln bench/norms/runs/sep-bn-ln --json compare.json

# the summary of what has finished so far (a campaign split over sessions, say)
graphnorm benchmark $DATA --norms ln,sep:bn+ln,sep:ln+ln --seeds $SEEDS --out bench/norms \
    --summary-only
