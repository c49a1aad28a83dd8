#!/usr/bin/env bash
# Pre-train on computed properties (pretrain.csv, from pretrain_table.py), fine-tune on the
# measured Y of mols.csv. QUICK adds flags for a smoke run; leave it empty.
set -euo pipefail
QUICK=${QUICK:-}

# random batches: BatchNorm at the [VNode] of size-sorted batches would subtract the molecule
# size that descriptors such as MolWt follow
graphnorm train --data pretrain.csv --target-columns MolLogP TPSA MolWt --split random \
    --random-batches --norm sep:bn+ln --ensemble 1 --out runs/pre $QUICK

# every weight but the head starts from runs/pre: same model, norm and featurizer settings
graphnorm train --data mols.csv --target-columns Y --norm sep:bn+ln --init-from runs/pre \
    --out runs/fine $QUICK
