#!/usr/bin/env bash
# Your own table, end to end: train -> predict with intervals -> embed -> search -> benchmark.
# Run it in a folder holding mols.csv (id,smiles,Y) and new.csv (id,smiles).
# QUICK adds flags for a smoke run (the tests: "--preset tiny --max-steps 5"); leave it empty.
set -euo pipefail
QUICK=${QUICK:-}
TRIALS=${TRIALS:-}    # the tests cap the search at 2 trials; a real search is bounded by time
REPEATS=${REPEATS:-5}

# 1. train: without --config a --data table gets the admet recipe, fine-tuned from the shipped backbone
graphnorm train --data mols.csv --target-columns Y --out runs/mine $QUICK

# 2. predict: Y for each row of new.csv, with a 90 % split-conformal interval (prediction_lo, prediction_hi)
graphnorm predict --checkpoint runs/mine --input new.csv --interval 0.9 --output preds.csv

# 3. embed: the [VNode] vector of each molecule, one row per input row. A table under 1,000
#    rows trains an ensemble of 3 (runs/mine/model_0..2): embed with one member, members
#    embed into different spaces (a larger table trains one model: --checkpoint runs/mine)
graphnorm embed --checkpoint runs/mine/model_0 --input new.csv --output emb.csv

# 4. search hyperparameters for 30 minutes, then train the best config
graphnorm hpopt --data mols.csv --target-columns Y --max-time 30m --out runs/search $TRIALS
graphnorm train --config runs/search/best.yaml --out runs/best $QUICK

# 5. compare with a random forest on Morgan counts and GIN-VN, on repeated random splits
graphnorm benchmark --data mols.csv --target-columns Y --split random --repeats $REPEATS \
    --models graphormer,rf,gin-vn --out bench/mine $QUICK
